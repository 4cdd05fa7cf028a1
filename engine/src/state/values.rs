//! The state container: one value per channel, addressed by index at run
//! time and by name at the edges (node code, conditions, events).

use std::collections::HashMap;
use std::sync::Arc;

use serde_json::{Map, Value};

use crate::format::{ChannelType, Reducer, StateSchema};
use crate::schema::{Mismatch, ValueSchema};

use super::reducer::{ReduceError, empty, reduce};

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
    /// Each channel's schema, when it has one.
    pub(crate) schemas: Vec<Option<Arc<ValueSchema>>>,
    index: HashMap<String, ChannelIdx>,
}

impl StateLayout {
    pub(crate) fn new(schema: &StateSchema) -> Self {
        let mut layout = StateLayout {
            names: Vec::new(),
            types: Vec::new(),
            reducers: Vec::new(),
            defaults: Vec::new(),
            schemas: Vec::new(),
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
            // A schema that does not read fails validation; compiling stops there.
            layout
                .schemas
                .push(ValueSchema::of_channel(channel).map(Arc::new));
        }
        layout
    }

    /// The schema of a channel, when it has one.
    pub fn schema(&self, idx: ChannelIdx) -> Option<&ValueSchema> {
        self.schemas[idx.0 as usize].as_deref()
    }

    /// Combines `update` into the channel's `current` value with its
    /// reducer, and checks the result against the channel's schema; a
    /// value that does not fit leaves `current` as it was. `message_id`
    /// names new messages (see [`reduce`]).
    pub(crate) fn apply(
        &self,
        idx: ChannelIdx,
        current: &mut Value,
        update: Value,
        message_id: &dyn Fn(usize) -> String,
    ) -> Result<(), ReduceError> {
        let slot = idx.0 as usize;
        let (name, ty, reducer) = (&self.names[slot], self.types[slot], self.reducers[slot]);
        let schema = self.schemas[slot].as_deref();
        apply_checked(name, ty, reducer, schema, current, update, message_id)
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

/// [`reduce`], with what it writes checked against `schema` when there is
/// one: an update that does not fit is refused and `current` is left as it
/// was.
pub(crate) fn apply_checked(
    name: &str,
    ty: ChannelType,
    reducer: Reducer,
    schema: Option<&ValueSchema>,
    current: &mut Value,
    update: Value,
    message_id: &dyn Fn(usize) -> String,
) -> Result<(), ReduceError> {
    let Some(schema) = schema else {
        return reduce(name, ty, reducer, current, update, message_id);
    };
    let misfit = |mismatch: Mismatch| ReduceError {
        channel: name.to_string(),
        ty,
        reducer,
        message: format!("the value does not fit the channel's schema: {mismatch}"),
    };
    match reducer {
        Reducer::Replace => {
            // `null` clears, whatever the schema.
            if !update.is_null() {
                schema.check(&update).map_err(misfit)?;
            }
            reduce(name, ty, reducer, current, update, message_id)
        }
        Reducer::Append => {
            let len = current.as_array().map_or(0, Vec::len);
            let added = match &update {
                Value::Array(items) => items.as_slice(),
                one => std::slice::from_ref(one),
            };
            schema.check_append(added, len).map_err(misfit)?;
            reduce(name, ty, reducer, current, update, message_id)
        }
        // Only the fields written are checked: no copy of a large object.
        Reducer::Merge => {
            if let Value::Object(fields) = &update {
                schema.check_merge(fields).map_err(misfit)?;
            }
            reduce(name, ty, reducer, current, update, message_id)
        }
        Reducer::Sum | Reducer::AddMessages => {
            let mut next = current.clone();
            reduce(name, ty, reducer, &mut next, update, message_id)?;
            if !next.is_null() {
                schema.check(&next).map_err(misfit)?;
            }
            *current = next;
            Ok(())
        }
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
