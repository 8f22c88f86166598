//! The native addon behind the `retrypolicy` npm package: conversion and error mapping over the
//! core, nothing else. Each export converts its arguments into the core's types, calls the core,
//! and throws core errors as `Error`s with `code` and `field`. The public API is the JavaScript
//! layer in `lib/`; this addon's exports (typed in the generated `index.d.ts`) are private to it.

// napi-derive registers the exports only outside `cargo test`, where they would all look unused.
#![cfg_attr(test, allow(dead_code))]

#[cfg(feature = "bench")]
mod bench;
mod callback;
mod classify;
mod convert;
mod decide;
mod decision;
mod errors;
mod objects;
mod policy;
mod raw;
mod request;
mod run;
mod strategy;
mod wire;
