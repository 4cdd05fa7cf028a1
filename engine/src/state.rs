//! A run's state: the values of the graph's channels, the checks that an
//! update fits its channel's type, and the reducers that combine updates.

mod reducer;
mod values;

pub use reducer::{ReduceError, fits, reduce};
pub(crate) use reducer::{is_of_type, kind as kind_of};
pub use values::{ChannelIdx, State, StateLayout};
