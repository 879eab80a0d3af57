//! Small additions to the Rust-side API for binding crates (Python, Java, Node):
//! turning an owned handle into the raw pointer a C consumer receives. The general
//! door for every handle kind is [`crate::raw`].

use crate::handle;
use crate::tensor::HurrayTensor;

impl HurrayTensor {
    /// Moves the tensor to the heap and returns the pointer a C consumer will own
    /// (destroy it with `hurray_tensor_destroy`). Debug builds register it, so a
    /// second destroy through a stale copy is detected. Same as
    /// [`raw::into_raw`](crate::raw::into_raw).
    pub fn into_raw(self) -> *mut HurrayTensor {
        handle::into_raw(self)
    }
}
