//! [`InstanceStore::pick_nearest`]: the few instances of a group that look largest from a camera, found from the
//! clusters near it in O(clusters) plus the members of the clusters that may hold one, never O(instances).
//! The GPU-driven path draws these few on the CPU (the unique tier) and lets the GPU cull the rest.

use glam::Vec3;

use crate::camera::CullCamera;
use crate::error::Result;
use crate::instance::GroupId;
use crate::reference::sphere_visible;
use crate::store::InstanceStore;

impl InstanceStore {
    /// Writes into `out` the slots of the (at most `out.len()`) instances of group `g` that are visible from
    /// `camera` with a screen size of at least `min_screen_size`, the largest first (ties by slot), and returns
    /// how many it wrote. `scratch` holds their screen sizes (at least `out.len()` long).
    ///
    /// A cluster is skipped when its box is outside the frustum or when even a sphere as large as the box's
    /// smallest half extent at the box's nearest depth would look smaller than `min_screen_size` (every member's
    /// sphere lies inside the box); only the members of the other clusters are tested, with the same sphere test
    /// and screen size as culling. Allocates nothing.
    ///
    /// # Errors
    ///
    /// An unknown group, a camera that fails [`CullCamera::validate`], or `scratch` shorter than `out`.
    pub fn pick_nearest(
        &self,
        g: GroupId,
        camera: &CullCamera,
        min_screen_size: f32,
        out: &mut [u32],
        scratch: &mut [f32],
    ) -> Result<usize> {
        camera.validate()?;
        if scratch.len() < out.len() {
            return Err(crate::Error::BufferSize {
                what: "pick scratch",
                expected: out.len(),
                actual: scratch.len(),
            });
        }
        let grp = self.group_ref(g)?;
        let mut n = 0usize;
        let dp = camera.depth_plane;
        let normal = dp.truncate();
        for (k, c) in grp.clusters.iter().enumerate() {
            if c.len == 0 || out.is_empty() {
                continue;
            }
            let (centre, half) = (c.aabb.center(), c.aabb.half_extent());
            // Most clusters are far: the size bound (one dot product) rejects them before the plane tests.
            let near = normal.dot(centre) + dp.w - normal.abs().dot(half);
            if near > 0.0 && half.min_element() * camera.proj_scale < min_screen_size * near {
                continue;
            }
            let outside = camera.planes.iter().any(|p| {
                let pn = p.truncate();
                pn.dot(centre) + p.w + pn.abs().dot(half) < 0.0
            });
            if outside {
                continue;
            }
            let first = k * grp.cap;
            for s in first..first + c.len as usize {
                let (centre, r): (Vec3, f32) = grp.sphere(s);
                if !sphere_visible(camera, centre, r) {
                    continue;
                }
                let size = camera.screen_size(centre, r);
                if size < min_screen_size {
                    continue;
                }
                // Insert into the sorted prefix (largest first); past a full list, only larger ones enter.
                let mut at = n;
                while at > 0 && (scratch[at - 1] < size || (scratch[at - 1] == size && out[at - 1] > s as u32)) {
                    at -= 1;
                }
                if at >= out.len() {
                    continue;
                }
                let end = (n + 1).min(out.len());
                for i in (at + 1..end).rev() {
                    out[i] = out[i - 1];
                    scratch[i] = scratch[i - 1];
                }
                out[at] = s as u32;
                scratch[at] = size;
                n = end;
            }
        }
        Ok(n)
    }
}
