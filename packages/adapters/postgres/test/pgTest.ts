// Test helpers for a real PostgreSQL server: REWIND_PG_URL names it (.ci/postgres.sh starts a
// throwaway one). Without it every PostgreSQL test is skipped with a printed reason, never silently.
// Each test gets its own schema (the store's tables live there), dropped when the test's scope ends.
import { randomUUID } from "node:crypto"
import { describe } from "@effect/vitest"
import { SessionStore } from "@rewind/core"
import { Context, Effect, Exit, Layer, Scope } from "effect"
import pg from "pg"
import { PostgresSessionStore, type PostgresStoreOptions } from "../src/index.js"

export const pgUrl = process.env.REWIND_PG_URL ?? ""
export const pgAvailable = pgUrl !== ""

export const SKIP_REASON =
  "REWIND_PG_URL is not set: the PostgreSQL adapter's tests are skipped (run `source .ci/postgres.sh` first to start a throwaway server)"

/** `describe`, skipped (with the reason printed once per file) when there is no server. */
export const describePg = (name: string, body: () => void) => {
  if (!pgAvailable) console.warn(`${name}: ${SKIP_REASON}`)
  describe.skipIf(!pgAvailable)(name, body)
}

let admin: pg.Pool | undefined
/** One pool per test file for raw SQL behind the adapter's back; closed after the file. */
export const adminPool = (): pg.Pool => {
  if (admin === undefined) {
    admin = new pg.Pool({ connectionString: pgUrl, max: 4 })
    admin.on("error", () => {})
  }
  return admin
}
/**
 * Closes the pool: run after every test file by the setup file test/closeAdminPool.ts (an
 * `afterAll` here would belong only to the first file of a worker, as files share modules).
 */
export const closeAdminPool = async (): Promise<void> => {
  await admin?.end()
  admin = undefined
}

/** Runs raw SQL with the schema first on the search path. */
export const rawQuery = async <R extends pg.QueryResultRow = pg.QueryResultRow>(
  schema: string,
  text: string,
  values: ReadonlyArray<unknown> = [],
): Promise<pg.QueryResult<R>> => {
  const client = await adminPool().connect()
  try {
    await client.query(`set search_path to "${schema}"`)
    return await client.query<R>(text, values as Array<unknown>)
  } finally {
    await client.query("reset search_path").catch(() => undefined)
    client.release()
  }
}

export const rawQueryEffect = <R extends pg.QueryResultRow = pg.QueryResultRow>(
  schema: string,
  text: string,
  values: ReadonlyArray<unknown> = [],
) => Effect.promise(() => rawQuery<R>(schema, text, values))

/** Whatever SQLSTATE and message raw SQL fails with (undefined when it succeeds). */
export const rawError = async (schema: string, text: string) => {
  try {
    await rawQuery(schema, text)
    return undefined
  } catch (error) {
    return { code: (error as { code?: string }).code, message: (error as Error).message }
  }
}

export const freshSchemaName = () => `rw_t_${randomUUID().replaceAll("-", "").slice(0, 20)}`

/** A schema name for this test; the schema (whatever the store created in it) is dropped at the end. */
export const tempSchema = Effect.acquireRelease(Effect.sync(freshSchemaName), (schema) =>
  Effect.promise(() => adminPool().query(`drop schema if exists "${schema}" cascade`)),
)

export const storeOptions = (
  schema: string,
  extra: Partial<PostgresStoreOptions> = {},
): PostgresStoreOptions => ({
  connectionString: pgUrl,
  schema,
  poolSize: 4,
  ...extra,
})

/**
 * Empties a store's tables behind its back (test only: as superuser, with its triggers and foreign
 * keys off for this session), so that the next user finds a store as fresh as a new schema.
 */
export const emptyStore = async (schema: string) => {
  const client = await adminPool().connect()
  try {
    await client.query(`set search_path to "${schema}"`)
    await client.query("set session_replication_role = replica")
    await client.query(
      "delete from sessions; delete from command_facts; delete from events; delete from streams",
    )
  } finally {
    await client.query("reset session_replication_role").catch(() => undefined)
    await client.query("reset search_path").catch(() => undefined)
    client.release()
  }
}

/**
 * For model-based tests, which need a fresh store per command sequence: one store (one schema,
 * one pool) opened for the whole test, and a layer factory whose every build empties it first.
 * Opening and migrating a schema per sequence would cost more than the sequence itself.
 */
export const withRecycledStore = async <A>(
  body: (makeStore: () => Layer.Layer<SessionStore>) => Promise<A>,
): Promise<A> => {
  const schema = freshSchemaName()
  const scope = Effect.runSync(Scope.make())
  try {
    const context = await Effect.runPromise(
      Layer.buildWithScope(PostgresSessionStore.layer(storeOptions(schema, { poolSize: 2 })), scope),
    )
    const store = Context.get(context, SessionStore)
    return await body(() =>
      Layer.effect(
        SessionStore,
        Effect.as(
          Effect.promise(() => emptyStore(schema)),
          store,
        ),
      ),
    )
  } finally {
    await Effect.runPromise(Scope.close(scope, Exit.void))
    await adminPool().query(`drop schema if exists "${schema}" cascade`)
  }
}
