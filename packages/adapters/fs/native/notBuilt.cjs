// Run when node-gyp could not build the native directory scanner: the package still works, on the
// JavaScript scanner, so the install goes on; this says why scans will be slower.
console.warn(
  "@rewind/adapter-fs: the native directory scanner was not built (node-gyp needs python3, make and a C compiler); workspace scans use the JavaScript scanner.",
)
