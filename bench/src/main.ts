// Benchmark entry point. Until the shared harness lands, it runs the store benchmarks and prints
// their figures (ratios against baselines measured in the same run). The PostgreSQL benchmark
// needs BENCH_PG_URL or REWIND_PG_URL and says so when neither is set.
import { formatPostgresStoreBench, runPostgresStoreBench } from "./postgresStore.bench.js"
import { formatSqliteStoreBench, runSqliteStoreBench } from "./sqliteStore.bench.js"

const report = await runSqliteStoreBench()
console.log(formatSqliteStoreBench(report))
console.log(formatPostgresStoreBench(await runPostgresStoreBench()))
