/* The native hook client's JSON reader and writer helpers (see json.h). Memory is never freed:
 * the client reads one payload and one answer, then exits. */
#include "json.h"
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define MAX_DEPTH 256

int utf8_valid(const unsigned char *s, size_t n) {
  for (size_t i = 0; i < n;) {
    unsigned char c = s[i];
    if (c < 0x80) { i++; continue; }
    size_t extra;
    uint32_t cp;
    if (c >= 0xc2 && c <= 0xdf) { extra = 1; cp = c & 0x1f; }
    else if (c >= 0xe0 && c <= 0xef) { extra = 2; cp = c & 0x0f; }
    else if (c >= 0xf0 && c <= 0xf4) { extra = 3; cp = c & 0x07; }
    else return 0;
    if (i + extra >= n) return 0;
    for (size_t k = 1; k <= extra; k++) {
      if ((s[i + k] & 0xc0) != 0x80) return 0;
      cp = cp << 6 | (s[i + k] & 0x3f);
    }
    if ((extra == 2 && cp < 0x800) || (extra == 3 && (cp < 0x10000 || cp > 0x10ffff))) return 0;
    if (cp >= 0xd800 && cp <= 0xdfff) return 0;
    i += extra + 1;
  }
  return 1;
}

void buffer_add(buffer *b, const char *s, size_t n) {
  if (b->length + n + 1 > b->capacity) {
    size_t capacity = b->capacity == 0 ? 256 : b->capacity;
    while (b->length + n + 1 > capacity) capacity *= 2;
    char *grown = realloc(b->data, capacity);
    if (grown == NULL) abort();
    b->data = grown;
    b->capacity = capacity;
  }
  memcpy(b->data + b->length, s, n);
  b->length += n;
  b->data[b->length] = 0;
}

void buffer_str(buffer *b, const char *s) { buffer_add(b, s, strlen(s)); }

void buffer_json_string(buffer *b, const char *s) {
  static const char digits[] = "0123456789abcdef";
  buffer_add(b, "\"", 1);
  for (const char *p = s; *p; p++) {
    unsigned char c = (unsigned char)*p;
    if (c == '"') buffer_add(b, "\\\"", 2);
    else if (c == '\\') buffer_add(b, "\\\\", 2);
    else if (c == '\n') buffer_add(b, "\\n", 2);
    else if (c < 0x20) {
      char escape[6] = {'\\', 'u', '0', '0', digits[c >> 4], digits[c & 15]};
      buffer_add(b, escape, 6);
    } else buffer_add(b, p, 1);
  }
  buffer_add(b, "\"", 1);
}

typedef struct {
  const char *s;
  size_t n, i;
  int depth;
} reader;

static void skip_space(reader *r) {
  while (r->i < r->n && (r->s[r->i] == ' ' || r->s[r->i] == '\t' || r->s[r->i] == '\n' || r->s[r->i] == '\r'))
    r->i++;
}

static jvalue *make(jtype type) {
  jvalue *v = calloc(1, sizeof *v);
  if (v == NULL) abort();
  v->type = type;
  return v;
}

static int hex4(reader *r, uint32_t *out) {
  if (r->i + 4 > r->n) return 0;
  uint32_t v = 0;
  for (int k = 0; k < 4; k++) {
    char c = r->s[r->i++];
    v <<= 4;
    if (c >= '0' && c <= '9') v |= (uint32_t)(c - '0');
    else if (c >= 'a' && c <= 'f') v |= (uint32_t)(c - 'a' + 10);
    else if (c >= 'A' && c <= 'F') v |= (uint32_t)(c - 'A' + 10);
    else return 0;
  }
  *out = v;
  return 1;
}

static void put_code_point(buffer *b, uint32_t cp) {
  char out[4];
  if (cp < 0x80) { out[0] = (char)cp; buffer_add(b, out, 1); }
  else if (cp < 0x800) {
    out[0] = (char)(0xc0 | cp >> 6); out[1] = (char)(0x80 | (cp & 0x3f));
    buffer_add(b, out, 2);
  } else if (cp < 0x10000) {
    out[0] = (char)(0xe0 | cp >> 12); out[1] = (char)(0x80 | (cp >> 6 & 0x3f));
    out[2] = (char)(0x80 | (cp & 0x3f));
    buffer_add(b, out, 3);
  } else {
    out[0] = (char)(0xf0 | cp >> 18); out[1] = (char)(0x80 | (cp >> 12 & 0x3f));
    out[2] = (char)(0x80 | (cp >> 6 & 0x3f)); out[3] = (char)(0x80 | (cp & 0x3f));
    buffer_add(b, out, 4);
  }
}

/* A string literal at r->i (its opening quote), decoded; NULL when malformed. */
static jvalue *read_string(reader *r) {
  jvalue *v = make(J_STRING);
  buffer b = {0};
  buffer_add(&b, "", 0);
  r->i++;
  for (;;) {
    if (r->i >= r->n) return NULL;
    unsigned char c = (unsigned char)r->s[r->i];
    if (c == '"') { r->i++; break; }
    if (c < 0x20) return NULL;
    if (c != '\\') {
      size_t start = r->i;
      while (r->i < r->n && r->s[r->i] != '"' && r->s[r->i] != '\\' && (unsigned char)r->s[r->i] >= 0x20) r->i++;
      buffer_add(&b, r->s + start, r->i - start);
      continue;
    }
    if (++r->i >= r->n) return NULL;
    char e = r->s[r->i++];
    switch (e) {
      case '"': buffer_add(&b, "\"", 1); break;
      case '\\': buffer_add(&b, "\\", 1); break;
      case '/': buffer_add(&b, "/", 1); break;
      case 'b': buffer_add(&b, "\b", 1); break;
      case 'f': buffer_add(&b, "\f", 1); break;
      case 'n': buffer_add(&b, "\n", 1); break;
      case 'r': buffer_add(&b, "\r", 1); break;
      case 't': buffer_add(&b, "\t", 1); break;
      case 'u': {
        uint32_t cp;
        if (!hex4(r, &cp)) return NULL;
        if (cp >= 0xd800 && cp <= 0xdbff && r->i + 6 <= r->n && r->s[r->i] == '\\' && r->s[r->i + 1] == 'u') {
          size_t back = r->i;
          uint32_t low;
          r->i += 2;
          if (!hex4(r, &low)) return NULL;
          if (low >= 0xdc00 && low <= 0xdfff) cp = 0x10000 + ((cp - 0xd800) << 10) + (low - 0xdc00);
          else r->i = back;
        }
        if (cp >= 0xd800 && cp <= 0xdfff) { v->lone_surrogate = 1; cp = 0xfffd; }
        if (cp == 0) { v->lone_surrogate = 1; } /* a NUL cannot be held in a C string */
        put_code_point(&b, cp);
        break;
      }
      default: return NULL;
    }
  }
  v->text = b.data;
  v->length = b.length;
  return v;
}

static int digits(reader *r) {
  size_t start = r->i;
  while (r->i < r->n && r->s[r->i] >= '0' && r->s[r->i] <= '9') r->i++;
  return r->i > start;
}

static jvalue *read_number(reader *r) {
  size_t start = r->i;
  if (r->s[r->i] == '-') r->i++;
  if (r->i >= r->n) return NULL;
  if (r->s[r->i] == '0') r->i++;
  else if (!digits(r)) return NULL;
  if (r->i < r->n && r->s[r->i] == '.') { r->i++; if (!digits(r)) return NULL; }
  if (r->i < r->n && (r->s[r->i] == 'e' || r->s[r->i] == 'E')) {
    r->i++;
    if (r->i < r->n && (r->s[r->i] == '+' || r->s[r->i] == '-')) r->i++;
    if (!digits(r)) return NULL;
  }
  jvalue *v = make(J_NUMBER);
  char text[64];
  size_t len = r->i - start;
  if (len < sizeof text) {
    memcpy(text, r->s + start, len);
    text[len] = 0;
    v->number = strtod(text, NULL);
  } else v->number = 0.0 / 0.0; /* only ever compared with 1 (an answer's id) */
  return v;
}

static int literal(reader *r, const char *word) {
  size_t len = strlen(word);
  if (r->i + len > r->n || memcmp(r->s + r->i, word, len) != 0) return 0;
  r->i += len;
  return 1;
}

static void push(jvalue *v, char *key, jvalue *item) {
  if ((v->count & (v->count - 1)) == 0) { /* grow at powers of two */
    size_t capacity = v->count == 0 ? 1 : v->count * 2;
    v->items = realloc(v->items, capacity * sizeof *v->items);
    v->keys = realloc(v->keys, capacity * sizeof *v->keys);
    if (v->items == NULL || v->keys == NULL) abort();
  }
  v->keys[v->count] = key;
  v->items[v->count++] = item;
}

static jvalue *read_value(reader *r) {
  skip_space(r);
  if (r->i >= r->n) return NULL;
  char c = r->s[r->i];
  if (c == '"') return read_string(r);
  if (c == '-' || (c >= '0' && c <= '9')) return read_number(r);
  if (literal(r, "null")) return make(J_NULL);
  if (literal(r, "true")) return make(J_TRUE);
  if (literal(r, "false")) return make(J_FALSE);
  if (c != '[' && c != '{') return NULL;
  if (++r->depth > MAX_DEPTH) return NULL;
  jvalue *v = make(c == '[' ? J_ARRAY : J_OBJECT);
  char close = c == '[' ? ']' : '}';
  r->i++;
  skip_space(r);
  if (r->i < r->n && r->s[r->i] == close) { r->i++; r->depth--; return v; }
  for (;;) {
    char *key = NULL;
    if (v->type == J_OBJECT) {
      skip_space(r);
      if (r->i >= r->n || r->s[r->i] != '"') return NULL;
      jvalue *k = read_string(r);
      if (k == NULL) return NULL;
      /* A key holding a NUL or a lone surrogate equals none the client looks up. */
      key = k->lone_surrogate ? NULL : k->text;
      skip_space(r);
      if (r->i >= r->n || r->s[r->i] != ':') return NULL;
      r->i++;
    }
    jvalue *item = read_value(r);
    if (item == NULL) return NULL;
    push(v, key, item);
    skip_space(r);
    if (r->i >= r->n) return NULL;
    if (r->s[r->i] == ',') { r->i++; continue; }
    if (r->s[r->i] == close) { r->i++; break; }
    return NULL;
  }
  r->depth--;
  return v;
}

jvalue *json_parse(const char *text, size_t n) {
  reader r = {text, n, 0, 0};
  jvalue *v = read_value(&r);
  if (v == NULL) return NULL;
  skip_space(&r);
  return r.i == n ? v : NULL;
}

jvalue *json_get(const jvalue *object, const char *key) {
  if (object == NULL || object->type != J_OBJECT) return NULL;
  /* JSON.parse keeps the last of duplicate keys. A key with a NUL escape never matches. */
  for (size_t k = object->count; k-- > 0;)
    if (object->keys[k] != NULL && strcmp(object->keys[k], key) == 0) return object->items[k];
  return NULL;
}
