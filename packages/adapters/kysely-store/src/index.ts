/**
 * @rewind/kysely-store: the session store's SQL logic on Kysely, shared by the SQL adapters
 * (`@rewind/adapter-sqlite`, `@rewind/adapter-postgres`): table types, event rows and command facts
 * as rows, projection maintenance and rebuild, the SessionStore itself over a per-database
 * backend (transactions, locks, hot statements), and the OperationJournal likewise. Not a store on
 * its own: adapters build on it.
 */
export * from "./appendRequests.js"
export * from "./commandFacts.js"
export * from "./eventRows.js"
export * from "./journalScan.js"
export * from "./layerFromConfig.js"
export * from "./projections.js"
export * from "./retryTransient.js"
export * from "./sqlOperationJournal.js"
export * from "./sqlSessionStore.js"
export * from "./storeMigrations.js"
export * from "./streamIntegrity.js"
export * from "./tables.js"
