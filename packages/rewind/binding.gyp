{
  "targets": [
    {
      "target_name": "rewind-hook",
      "type": "executable",
      "sources": ["native/hookClient.c", "native/json.c", "native/paths.c", "native/sha256.c"],
      "cflags": ["-O2", "-Wall", "-Wextra", "-Wno-unused-parameter"],
      "xcode_settings": { "OTHER_CFLAGS": ["-O2"] }
    }
  ]
}
