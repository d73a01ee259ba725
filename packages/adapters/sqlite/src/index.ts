// Placeholder module: the package is being built (see the open issues); it exports nothing yet.
export {}
