/**
 * @rewind/adapter-fs: the filesystem adapters. A content-addressed blob store on disk and the Node
 * Workspace confined to its root, and the workspace watcher of a live engine.
 */
export * as FsArtifactStore from "./FsArtifactStore.js"
export * as NodeWorkspace from "./NodeWorkspace.js"
export * as WorkspaceWatcher from "./WorkspaceWatcher.js"
