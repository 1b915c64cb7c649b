//! The bash syntax, and nothing about programs: the lexer and its tokens (`lexer.rs`,
//! `token.rs`, with quoting and `$…` expansions in `expand.rs`), the parser that turns a
//! command string into simple commands (`parse.rs`), normalisation of each simple command
//! into segments (`normalise.rs`), the quoting used to render and rebuild words
//! (`quote.rs`), and what a split carries through every nesting level (`sink.rs`: the
//! segments collected, the redirections a command's segments share, the first problem).
//!
//! Names no program: where normalisation needs to know what a program does with its argv
//! (a wrapper, a script runner, a printer), it calls the [`sink::Classify`] function value
//! that [`crate::shell::split`] hands it from the program table (`shell::programs`), which
//! sits above this module.

mod expand;
pub(crate) mod lexer;
pub(crate) mod normalise;
pub(crate) mod parse;
pub(crate) mod quote;
pub(crate) mod sink;
mod token;
