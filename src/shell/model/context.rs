//! Where a command runs, as the caller tells the model: working directory, home, repository
//! root, callus's state directory, and the caller's way of resolving symlinks. The model
//! reads no environment or file system itself; this is all it knows.

/// What the model knows about where a command runs.
#[derive(Debug, Clone, Default)]
pub(crate) struct Context {
    /// The working directory the command starts in (absolute), when known.
    pub cwd: Option<String>,
    /// The home directory.
    pub home: Option<String>,
    /// The repository root containing `cwd`, when there is one.
    pub repo_root: Option<String>,
    /// callus's state directory.
    pub callus_home: Option<String>,
    /// Resolves symlinks of a path that exists (the caller's I/O; `None` keeps paths as
    /// written).
    pub realpath: Option<fn(&str) -> Option<String>>,
}
