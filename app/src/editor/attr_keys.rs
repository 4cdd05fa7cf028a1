//! Attribute names that hydrate without being written again.
//!
//! The view macro gives an attribute it does not know (`data-*`, SVG's `d`) a key known only at run time, and on stable Rust
//! tachys then sets such an attribute again on every element while it
//! hydrates, as if the server had not written it. On a 500-node,
//! 700-edge graph that was 3,800 `setAttribute` calls, 1,400 of them
//! making the browser parse an edge's path again: about a fifth of
//! hydrating the page. A key whose name is a constant is hydrated like a
//! known attribute: read from the server's HTML, written only when it
//! changes. Add them with `.attr(Key, value)` on the element a `view!`
//! returns (docs/performance.md, "Opening a graph").

use leptos::attr::custom::CustomAttributeKey;

macro_rules! attribute_key {
    ($($(#[$doc:meta])* $name:ident = $key:literal;)*) => {$(
        $(#[$doc])*
        #[derive(Clone, Copy, Debug)]
        pub struct $name;

        impl AsRef<str> for $name {
            fn as_ref(&self) -> &str {
                $key
            }
        }

        impl CustomAttributeKey for $name {
            const KEY: &'static str = $key;
        }
    )*};
}

attribute_key! {
    /// A node's id on its element.
    DataNode = "data-node";
    /// A node's state in the watched run.
    DataState = "data-state";
    /// An edge's id on its elements.
    DataEdge = "data-edge";
    /// An SVG path's geometry.
    D = "d";
}
