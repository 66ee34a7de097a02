//! Shared helpers of crowd-gpu's shader tests: parse and validate a WGSL module with naga, and read a struct's
//! layout or a storage array's stride from it.

#![allow(dead_code, reason = "each test file uses a different subset")]

use crowd_gpu::shaders::ShaderSource;

pub mod cull;
pub mod driven;
pub mod images;
pub mod scenes;

/// `shader`, composed with the files it requires, parsed and validated with every check and no extra capability;
/// panics with naga's report otherwise.
pub fn module(shader: &ShaderSource) -> naga::Module {
    module_source(shader.file, &shader.composed())
}

/// The renderer's module (`crowd_skin.wgsl`) with the palette fetch file `fetch`, validated as [`module`] does.
pub fn skin_module(fetch: &ShaderSource) -> naga::Module {
    module_source(fetch.file, &crowd_gpu::shaders::crowd_skin_source(fetch))
}

/// `source`, labelled `file`, parsed and validated as [`module`] does.
pub fn module_source(file: &str, source: &str) -> naga::Module {
    let module = naga::front::wgsl::parse_str(source)
        .unwrap_or_else(|e| panic!("{file} does not parse:\n{}", e.emit_to_string(source)));
    naga::valid::Validator::new(naga::valid::ValidationFlags::all(), naga::valid::Capabilities::empty())
        .validate(&module)
        .unwrap_or_else(|e| panic!("{file} does not validate:\n{}", e.emit_to_string(source)));
    module
}

/// The span of the struct named `name`, and each member's name, offset and type.
pub fn struct_layout(module: &naga::Module, name: &str) -> (u32, Vec<(Option<String>, u32, naga::TypeInner)>) {
    let (_, ty) = module
        .types
        .iter()
        .find(|(_, t)| t.name.as_deref() == Some(name))
        .unwrap_or_else(|| panic!("the module declares {name}"));
    let naga::TypeInner::Struct { members, span } = &ty.inner else {
        panic!("{name} is not a struct")
    };
    (
        *span,
        members
            .iter()
            .map(|m| (m.name.clone(), m.offset, module.types[m.ty].inner.clone()))
            .collect(),
    )
}

/// The array stride of the storage global named `name`.
pub fn global_stride(module: &naga::Module, name: &str) -> u32 {
    let (_, var) = module
        .global_variables
        .iter()
        .find(|(_, v)| v.name.as_deref() == Some(name))
        .unwrap_or_else(|| panic!("the module declares {name}"));
    let naga::TypeInner::Array { stride, .. } = module.types[var.ty].inner else {
        panic!("{name} is not an array")
    };
    stride
}

/// A headless device: on a machine without any adapter, panics when `CI=true` (CI installs lavapipe) and
/// otherwise prints a loud skip line and returns `None`.
pub fn gpu() -> Option<crowd_gpu::headless::Gpu> {
    match crowd_gpu::headless::Gpu::open(None).expect("the adapter gives a device") {
        Some(gpu) => {
            let _ = std::io::Write::write_all(
                &mut std::io::stderr(),
                format!(
                    "adapter: {} ({:?}, {:?})\n",
                    gpu.info.name, gpu.info.backend, gpu.info.device_type
                )
                .as_bytes(),
            );
            Some(gpu)
        }
        None => {
            assert!(
                std::env::var("CI").as_deref() != Ok("true"),
                "no wgpu adapter on CI: install a Vulkan driver (lavapipe: mesa-vulkan-drivers)"
            );
            let _ = std::io::Write::write_all(
                &mut std::io::stderr(),
                b"SKIPPED: no wgpu adapter on this machine; the GPU tests did not run\n",
            );
            None
        }
    }
}

/// Writes `instances`, held by `owners`, at slots `first..` of `resident` (growing its slot count to reach them)
/// as one frame's changes, recorded and submitted at once. The handle table is taken as just large enough for the
/// owners seen so far.
pub fn write_resident(
    gpu: &crowd_gpu::headless::Gpu,
    resident: &mut crowd_gpu::ResidentBuffer,
    first: u32,
    instances: &[crowd_frame::ResidentInstance],
    owners: &[crowd_frame::ResidentOwner],
) -> crowd_gpu::Result<u64> {
    let end = first + instances.len() as u32;
    let handles = owners
        .iter()
        .filter(|o| **o != crowd_frame::ResidentOwner::EMPTY)
        .map(|o| o.index + 1)
        .max()
        .unwrap_or(0)
        .max(resident.handle_capacity());
    let range = first..end;
    let ranges = std::slice::from_ref(&range);
    let mut encoder = gpu.device.create_command_encoder(&Default::default());
    let written = resident.apply(
        &gpu.device,
        &mut encoder,
        crowd_gpu::ResidentUpdate {
            slot_count: resident.slot_count().max(end),
            handle_capacity: handles,
            ranges,
            instances,
            owners,
        },
    )?;
    gpu.queue.submit([encoder.finish()]);
    Ok(written)
}
