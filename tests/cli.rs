//! The one integration-test binary: every test drives the real `callus` executable.
//! One module per pipeline stage.

mod common;
mod corpus;
mod demo;
mod derive;
mod docs;
mod doctor;
mod e2e;
mod effect_corpus;
mod examples;
mod fit;
mod guard;
mod hosts;
mod install;
mod peer_corpus;
mod prune;
mod readme;
mod record;
mod recuse;
mod scope;
mod shell_snapshot;
mod surface;
mod sync;
