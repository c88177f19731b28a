//! A Debug Adapter Protocol client: wire types, framing, transports, the request/response
//! correlator and the start handshake.
//!
//! The types are execkit's own rather than the `dap` crate's: that crate is server-side only
//! (no client transport, requests serialised without `"type":"request"`) and fails to parse
//! real debugpy traffic. Here the envelope is small and every body we read is typed, with a
//! catch-all for vendor events and unknown reverse requests ([`wire`]).
//!
//! Shape: one owner task per connection reads the stream and owns the `seq → oneshot` map of
//! pending requests; responses, events and reverse requests are sorted as they arrive, never
//! read "next" in an expected order, because adapters disagree on message order (debugpy
//! answers `launch` after `configurationDone`, lldb-dap 19 before `initialized`, delve stops
//! before answering `configurationDone`). [`handshake::start`] runs initialize → launch/attach
//! → configuration on top of that for all of them. Adapter processes are spawned through
//! `execkit-process`; every wait races a deadline.

pub mod adapters;
pub mod bodies;
pub mod client;
pub mod detect;
pub mod error;
pub mod events;
pub mod framing;
pub mod handshake;
pub mod launch;
mod owner;
pub mod process;
pub mod resolve;
pub mod reverse;
pub mod socket_dir;
mod trace;
pub mod transport;
pub mod wire;

pub use client::{Answer, Client, ClientOptions, ClientStats, PendingRequest};
pub use error::{HandshakeError, RequestError, StderrTail, TransportError};
pub use events::{DEFAULT_EVENT_CAPACITY, EventRecord};
pub use handshake::{
    BreakpointPlan, HandshakeOrder, HandshakeOutcome, HandshakeRequest, StartConfig,
};
pub use process::{AdapterCommand, AdapterProcess};
pub use reverse::{IncomingReverse, Responder, ReverseRequests};
pub use trace::TRACE_ENV;
pub use transport::Connection;
