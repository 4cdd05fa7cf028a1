//! One module per page.

mod graph;
mod home;
mod not_found;

pub use graph::GraphPage;
pub use home::HomePage;
pub use not_found::NotFound;
