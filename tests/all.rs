//! execkit integration tests: real processes, no mocks. One binary, a module per area.

mod output;
mod process;
mod bash;
mod support;
mod cli;
mod eval;
mod job;
