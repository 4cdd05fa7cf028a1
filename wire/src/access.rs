//! Who may do what with a graph. A user's role on a graph is the highest
//! of: owning it, a role the owner granted them, and the role of a share
//! link they opened (while that link is neither revoked nor expired).
//!
//! Viewers open, watch, replay, export and copy; editors also change and
//! run; only the owner shares, deletes and changes roles.

use heddle_engine::named_enum;
use serde::{Deserialize, Serialize};

named_enum! {
    /// A user's role on one graph, lowest first (so roles compare).
    #[derive(
        Clone,
        Copy,
        Debug,
        PartialEq,
        Eq,
        PartialOrd,
        Ord,
        Hash,
        Serialize,
        Deserialize,
        schemars::JsonSchema,
    )]
    pub enum Role {
        Viewer = "viewer",
        Editor = "editor",
        Owner = "owner",
    }
}

impl Role {
    /// Whether this role may change the graph and run it.
    pub fn can_edit(self) -> bool {
        self >= Role::Editor
    }

    /// What a user with this role can do, in words (for the share dialog).
    pub fn describe(self) -> &'static str {
        match self {
            Role::Viewer => "can open, watch runs, replay, export and copy",
            Role::Editor => "can also change and run the graph",
            Role::Owner => "can also share, delete and change roles",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Role;

    #[test]
    fn roles_are_ordered_and_round_trip() {
        assert!(Role::Viewer < Role::Editor && Role::Editor < Role::Owner);
        for role in [Role::Viewer, Role::Editor, Role::Owner] {
            assert_eq!(Role::parse(role.as_str()), Some(role));
        }
        assert_eq!(Role::parse("admin"), None);
        assert!(!Role::Viewer.can_edit() && Role::Editor.can_edit());
    }
}
