//! The rule domains as cargo features, all on by default (README, "Features"): which this build
//! has, and the error for asking for something that one it was built without holds.

use crate::error::Error;

/// One cargo feature of the core: its name, what it adds, and whether this build has it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Feature {
    /// The cargo feature's name.
    pub name: &'static str,
    /// What it adds, in a few words.
    pub adds: &'static str,
    /// Whether this build has it.
    pub built: bool,
}

/// Every feature, in the README's order.
pub const FEATURES: [Feature; 7] = {
    const COUCHBASE: &str =
        "Couchbase's classifiers: KV status codes and error maps, query, analytics, search, views";
    let rows = [
        ("couchbase", COUCHBASE, cfg!(feature = "couchbase")),
        (
            "http",
            "the HTTP retry loop and a run's http rules",
            cfg!(feature = "http"),
        ),
        (
            "mongodb",
            "MongoDB's retry rules and transactions",
            cfg!(feature = "mongodb"),
        ),
        (
            "grpc",
            "gRPC's retry and hedging policy (gRFC A6)",
            cfg!(feature = "grpc"),
        ),
        (
            "aws",
            "the AWS SDKs' retry modes (standard, adaptive, legacy)",
            cfg!(feature = "aws"),
        ),
        (
            "guards",
            "retry budgets and circuit breakers",
            cfg!(feature = "guards"),
        ),
        (
            "storms",
            "the schedule replay and the retry-storm simulation",
            cfg!(feature = "storms"),
        ),
    ];
    let mut out = [Feature {
        name: "",
        adds: "",
        built: false,
    }; 7];
    let mut i = 0;
    while i < rows.len() {
        out[i] = Feature {
            name: rows[i].0,
            adds: rows[i].1,
            built: rows[i].2,
        };
        i += 1;
    }
    out
};

/// The feature named `name`, if there is one.
pub fn feature(name: &str) -> Option<&'static Feature> {
    FEATURES.iter().find(|f| f.name == name)
}

/// The error for `value` (found at `field`: a function's name, a class), which needs `feature`,
/// left out of this build: code `unknown_name`, as for a name no build knows.
pub fn not_built(field: &str, value: &str, feature: &str) -> Error {
    Error::NotBuilt {
        field: field.to_owned(),
        value: value.to_owned(),
        feature: feature.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_names_the_manifests_default_features_in_its_order() {
        let manifest = include_str!("../Cargo.toml");
        let line = manifest
            .lines()
            .find(|l| l.starts_with("default = ["))
            .expect("core/Cargo.toml has a default feature list");
        let names: Vec<&str> = FEATURES.iter().map(|f| f.name).collect();
        let listed: Vec<&str> = line["default = [".len()..line.len() - 1]
            .split(", ")
            .map(|n| n.trim_matches('"'))
            .collect();
        assert_eq!(names, listed);
        for f in FEATURES {
            assert!(
                manifest.contains(&format!("\n{} = [", f.name)),
                "{} is no feature of core/Cargo.toml",
                f.name
            );
        }
    }

    #[test]
    fn a_name_left_out_is_unknown_name_naming_its_feature() {
        let e = not_built("function", "classify_kv", "couchbase");
        assert_eq!((e.code(), e.field()), ("unknown_name", "function"));
        assert_eq!(
            e.to_string(),
            "function: \"classify_kv\" is not in this build: it needs the feature \"couchbase\" (Couchbase's \
             classifiers: KV status codes and error maps, query, analytics, search, views), which this build leaves out"
        );
        let moved = e.with_field("class");
        assert_eq!((moved.code(), moved.field()), ("unknown_name", "class"));
    }
}
