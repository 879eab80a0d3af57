//! Sets the linker flags a Node addon needs (on macOS: resolve N-API at load time).
fn main() {
    napi_build::setup();
}
