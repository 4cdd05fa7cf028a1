//! The state container: one value per channel, addressed by index at run
//! time and by name at the edges (node code, conditions, events).

use std::collections::HashMap;
use std::sync::Arc;

use serde_json::{Map, Value};

use crate::format::{ChannelType, Reducer, StateSchema};

use super::reducer::empty;

/// A channel's position in the state, fixed when the graph is compiled.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ChannelIdx(pub(crate) u32);

/// The channels of a compiled graph, in name order.
#[derive(Debug)]
pub struct StateLayout {
    pub(crate) names: Vec<String>,
    pub(crate) types: Vec<ChannelType>,
    pub(crate) reducers: Vec<Reducer>,
    pub(crate) defaults: Vec<Value>,
    index: HashMap<String, ChannelIdx>,
}

impl StateLayout {
    pub(crate) fn new(schema: &StateSchema) -> Self {
        let mut layout = StateLayout {
            names: Vec::new(),
            types: Vec::new(),
            reducers: Vec::new(),
            defaults: Vec::new(),
            index: HashMap::new(),
        };
        for (i, (name, channel)) in schema.channels.iter().enumerate() {
            layout.index.insert(name.clone(), ChannelIdx(i as u32));
            layout.names.push(name.clone());
            layout.types.push(channel.ty);
            layout.reducers.push(channel.reducer);
            layout
                .defaults
                .push(channel.default.clone().unwrap_or_else(|| empty(channel.ty)));
        }
        layout
    }

    /// The index of a channel.
    pub fn index(&self, name: &str) -> Option<ChannelIdx> {
        self.index.get(name).copied()
    }

    /// The name of a channel.
    pub fn name(&self, idx: ChannelIdx) -> &str {
        &self.names[idx.0 as usize]
    }

    /// How many channels there are.
    pub fn len(&self) -> usize {
        self.names.len()
    }

    /// Whether the state has no channels.
    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }
}

/// The values of a run's channels.
#[derive(Debug, Clone)]
pub struct State {
    layout: Arc<StateLayout>,
    pub(crate) values: Vec<Value>,
}

impl State {
    /// Every channel at its default.
    pub fn new(layout: Arc<StateLayout>) -> Self {
        let values = layout.defaults.clone();
        State { layout, values }
    }

    /// A channel's value by name.
    pub fn get(&self, name: &str) -> Option<&Value> {
        self.layout
            .index(name)
            .map(|idx| &self.values[idx.0 as usize])
    }

    /// A channel's value by index.
    pub fn at(&self, idx: ChannelIdx) -> &Value {
        &self.values[idx.0 as usize]
    }

    pub(crate) fn at_mut(&mut self, idx: ChannelIdx) -> &mut Value {
        &mut self.values[idx.0 as usize]
    }

    /// The channels' layout.
    pub fn layout(&self) -> &StateLayout {
        &self.layout
    }

    /// The whole state as a JSON object, keys in name order.
    pub fn to_json(&self) -> Value {
        let mut map = Map::new();
        for (name, value) in self.layout.names.iter().zip(&self.values) {
            map.insert(name.clone(), value.clone());
        }
        Value::Object(map)
    }
}
