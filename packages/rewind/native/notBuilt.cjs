// Run when node-gyp could not build the native hook client (native/hookClient.c): the package
// still works, and `rewind install` writes the Node hook command instead; this says why hooks are
// slower. `rewind status` and `rewind doctor` say which client is installed.
console.warn(
  "rewind: the native hook client was not built (node-gyp needs python3, make and a C compiler); `rewind install` writes the Node hook command, which starts slower.",
)
