/* A strict JSON reader for the native hook client (RFC 8259, as JSON.parse reads it). It must
 * never accept what JSON.parse refuses: the client sends a payload it accepted to the server as
 * it is, and anything it refuses goes to the Node hook client, which explains it. */
#ifndef REWIND_JSON_H
#define REWIND_JSON_H
#include <stddef.h>

typedef enum { J_NULL, J_FALSE, J_TRUE, J_NUMBER, J_STRING, J_ARRAY, J_OBJECT } jtype;

typedef struct jvalue {
  jtype type;
  /* J_STRING: the decoded text (UTF-8, NUL-terminated; `length` bytes). A lone surrogate
   * escape is decoded as U+FFFD (what Node writes for it) and sets `lone_surrogate`, as does a
   * \u0000 (a C string cannot hold it): such a text is only ever printed, never used as a path. */
  char *text;
  size_t length;
  int lone_surrogate;
  double number;
  /* J_ARRAY / J_OBJECT: `count` items (and, for objects, their keys, in order). */
  struct jvalue **items;
  char **keys;
  size_t count;
} jvalue;

/* Whether the bytes are well-formed UTF-8 (no overlongs, surrogates or code points past U+10FFFF). */
int utf8_valid(const unsigned char *s, size_t n);

/* The value the whole of text[0..n) is (whitespace around it allowed), or NULL when it is not
 * exactly one JSON value (or nests deeper than the reader goes). */
jvalue *json_parse(const char *text, size_t n);

/* The object's member `key` (the last one, as JSON.parse keeps), or NULL. */
jvalue *json_get(const jvalue *object, const char *key);

/* Appends `s` as a JSON string literal (quotes and escapes) to the growing buffer. */
typedef struct { char *data; size_t length, capacity; } buffer;
void buffer_add(buffer *b, const char *s, size_t n);
void buffer_str(buffer *b, const char *s);
void buffer_json_string(buffer *b, const char *s);

#endif
