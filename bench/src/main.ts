// Benchmark entry point: the suite is being built (issue 9).
console.log("no benchmarks yet")
