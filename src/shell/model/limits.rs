//! The model's limits: a command beyond one is not analysed further and yields an
//! `exceeds-limit` effect naming it (see the model's module doc, "Limits").

/// Commands longer than this (bytes) are not analysed: `exceeds-limit limit=length`.
pub(crate) const MAX_LEN: usize = 256 * 1024;
/// More wrapper words than this in one command: `exceeds-limit limit=wrappers`.
pub(crate) const MAX_WRAPPERS: usize = 64;
/// More expansions followed than this: `exceeds-limit limit=expansions`.
pub(crate) const MAX_EXPANSIONS: usize = 64;
