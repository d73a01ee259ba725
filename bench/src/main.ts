// Benchmark entry point. Until the shared harness lands, it runs the SQLite store benchmark and
// prints its figures (ratios against baselines measured in the same run).
import { formatSqliteStoreBench, runSqliteStoreBench } from "./sqliteStore.bench.js"

const report = await runSqliteStoreBench()
console.log(formatSqliteStoreBench(report))
