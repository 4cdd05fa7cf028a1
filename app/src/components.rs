//! Pieces of UI the pages share, one file per component.

mod error_view;
mod header;

pub use error_view::ErrorView;
pub use header::Header;
