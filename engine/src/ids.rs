//! Typed ids. Node and edge ids are the user's names from the graph
//! document; cloning one is a reference-count bump, so events and tasks can
//! carry them freely.

use std::fmt;
use std::sync::Arc;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

macro_rules! name_id {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub struct $name(Arc<str>);

        impl $name {
            /// The id as text.
            pub fn as_str(&self) -> &str {
                &self.0
            }
        }

        impl From<&str> for $name {
            fn from(value: &str) -> Self {
                $name(Arc::from(value))
            }
        }

        impl From<String> for $name {
            fn from(value: String) -> Self {
                $name(Arc::from(value))
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&self.0)
            }
        }

        impl fmt::Debug for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, "{}({:?})", stringify!($name), &*self.0)
            }
        }

        impl Serialize for $name {
            fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                serializer.serialize_str(&self.0)
            }
        }

        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                String::deserialize(deserializer).map($name::from)
            }
        }

        impl schemars::JsonSchema for $name {
            fn schema_name() -> std::borrow::Cow<'static, str> {
                stringify!($name).into()
            }

            fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
                schemars::json_schema!({ "type": "string", "minLength": 1 })
            }
        }
    };
}

name_id!(
    /// A node's id, unique within its graph.
    NodeId
);
name_id!(
    /// An edge's id, unique within its graph.
    EdgeId
);
name_id!(
    /// A run's id, chosen by whoever starts the run (the server uses UUIDs).
    RunId
);
name_id!(
    /// A thread: a conversation, whose runs share thread-scoped channels.
    ThreadId
);
name_id!(
    /// A checkpoint, unique within its thread.
    CheckpointId
);
