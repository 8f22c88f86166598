//! Runs every spec fixture (and any under SPEC_FIXTURES_DIR); ends with `N passed, N failed`.

mod common;

use std::path::PathBuf;

fn main() {
    let mut tally = common::Tally::default();
    common::run_dir(&common::corpus_dir(), &mut tally);
    if let Some(extra) = std::env::var_os("SPEC_FIXTURES_DIR") {
        let extra = PathBuf::from(extra);
        if !extra.is_dir() {
            eprintln!("SPEC_FIXTURES_DIR {} is not a folder", extra.display());
            tally.failed += 1;
        }
        common::run_dir(&extra, &mut tally);
    }
    for f in &tally.failures {
        println!("FAIL {f}");
    }
    if tally.unbuilt > 0 {
        // A build without some features (make test-features): those cases are refused as they must be.
        println!(
            "{} of the passed cases need a feature this build leaves out",
            tally.unbuilt
        );
    }
    println!("{} passed, {} failed", tally.passed, tally.failed);
    if tally.failed > 0 {
        std::process::exit(1);
    }
}
