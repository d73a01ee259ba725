{
  "targets": [
    {
      "target_name": "dirscan",
      "sources": ["native/dirscan.c", "native/watch.c", "native/readbatch.c"],
      "cflags": ["-O2", "-Wall", "-Wextra", "-Wno-unused-parameter"],
      "xcode_settings": { "OTHER_CFLAGS": ["-O2"] },
      "libraries": ["-lpthread"]
    }
  ]
}
