//! Pieces of UI the pages share, one file per component.

mod error_view;
mod graph_preview;
mod header;
mod not_found_view;

pub use error_view::ErrorView;
pub use graph_preview::GraphPreview;
pub use header::Header;
pub use not_found_view::NotFoundView;
