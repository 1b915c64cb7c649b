//! Integration tests: `rules promote|list|show`, `guard prune` and `report`, on generated
//! histories written straight into the store.

mod age;
mod history;
mod lifecycle;
mod promote;
mod report;
mod report_views;
