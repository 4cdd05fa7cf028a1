//! One module per page.

mod graph;
mod home;
mod login;
mod not_found;
mod settings;
mod share;
mod signup;

pub use graph::GraphPage;
pub use home::HomePage;
pub use login::LoginPage;
pub use not_found::NotFound;
pub use settings::SettingsPage;
pub use share::SharePage;
pub use signup::SignupPage;
