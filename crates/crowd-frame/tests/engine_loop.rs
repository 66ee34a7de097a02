//! Runs `examples/engine_loop.rs`, the program an engine writes against crowd-frame, so that it keeps compiling
//! and working.

#[path = "../examples/engine_loop.rs"]
mod engine_loop;

#[test]
fn the_engine_loop_example_runs() {
    engine_loop::main().expect("the example runs");
}
