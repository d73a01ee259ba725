/** The package version the CLI, the server and `serve --schema` report (a module of its own, so `--version` loads nothing else). */
export const VERSION = "0.1.0"
