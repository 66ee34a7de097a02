//! The windowed run (winit 0.30): the render thread is winit's, the simulation runs on its own thread, and the
//! window title and a line on stdout each second carry the figures.
//!
//! Keys: Esc quits; Space pauses; `.` steps once while paused; `+` and `-` change the speed; C crossfades everyone to
//! the next clip (and back to the scene after the last); `]` and `[` double and halve the crowd; 1 to 5 pick the view
//! (shaded, instance, LOD, tier, normals); L turns shadows on and off; Tab switches orbit and fly; WASD, Q and E
//! move; dragging with the left button turns, and the wheel zooms.

use std::collections::HashSet;
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, anyhow};
use crowd_frame::{ClipId, FrameStats, Packet};
use crowd_gpu::{DebugView, RenderPath};
use glam::{Vec2, Vec3};
use skin_pack::FrameExchange;
use winit::application::ApplicationHandler;
use winit::event::{ElementState, MouseButton, MouseScrollDelta, WindowEvent};
use winit::event_loop::{ActiveEventLoop, ControlFlow, EventLoop};
use winit::keyboard::{KeyCode, PhysicalKey};
use winit::window::{Window, WindowId};

use crate::assets::Assets;
use crate::camera::Camera;
use crate::scene::Scene;
use crate::sim::{Controls, Pace, SimReport};
use crate::stage::{Stage, msaa_samples};
use crate::stats::{Drawn, RenderStages, RenderTimes, Report, SimStages, add_stages, mean, percentile, settled};
use crate::world::World;
use crate::{Args, NO_ADAPTER};

/// There is no display to open a window on; the reason.
#[derive(Debug)]
pub struct NoDisplay(pub String);

/// Runs `scene` in a window until it is closed, Esc, or `--seconds` (or the scene's `seconds`) have passed.
///
/// # Errors
///
/// `Err(NoDisplay)` when no window can be opened (the caller renders headless instead); otherwise `Ok` of the run's
/// result.
pub fn run(args: &Args, scene: &Scene, assets: Arc<Assets>) -> std::result::Result<Result<()>, NoDisplay> {
    let event_loop = EventLoop::new().map_err(|e| NoDisplay(e.to_string()))?;
    event_loop.set_control_flow(ControlFlow::Poll);
    let seconds = args.seconds.unwrap_or(scene.seconds);
    let mut app = App {
        args: args.clone(),
        scene: scene.clone(),
        assets,
        seconds: (seconds > 0.0).then(|| Duration::from_secs_f32(seconds)),
        running: None,
        result: Ok(()),
    };
    if let Err(e) = event_loop.run_app(&mut app) {
        return Ok(Err(anyhow!("the event loop failed: {e}")));
    }
    Ok(app.result)
}

struct App {
    args: Args,
    scene: Scene,
    assets: Arc<Assets>,
    seconds: Option<Duration>,
    running: Option<Running>,
    result: Result<()>,
}

/// Everything that exists while the window is open.
struct Running {
    window: Arc<Window>,
    surface: wgpu::Surface<'static>,
    adapter_name: String,
    device: wgpu::Device,
    queue: wgpu::Queue,
    config: wgpu::SurfaceConfiguration,
    stage: Stage,
    controls: Arc<Mutex<Controls>>,
    exchange: Arc<FrameExchange<Packet>>,
    sim: Option<JoinHandle<Result<SimReport>>>,
    camera: Camera,
    held: HashSet<KeyCode>,
    dragging: Option<Vec2>,
    cursor: Vec2,
    started: Instant,
    last_frame: Instant,
    last_print: Instant,
    times: RenderTimes,
    stages: FrameStats,
    packets: u64,
    count: usize,
    clip: Option<usize>,
    drawn: Drawn,
    paused: bool,
    speed: f32,
}

impl ApplicationHandler for App {
    fn resumed(&mut self, event_loop: &ActiveEventLoop) {
        if self.running.is_some() {
            return;
        }
        match self.open(event_loop) {
            Ok(r) => {
                println!("{HELP}");
                r.window.request_redraw();
                self.running = Some(r);
            }
            Err(e) => {
                self.result = Err(e);
                event_loop.exit();
            }
        }
    }

    fn window_event(&mut self, event_loop: &ActiveEventLoop, _id: WindowId, event: WindowEvent) {
        let Some(r) = self.running.as_mut() else {
            return;
        };
        match event {
            WindowEvent::CloseRequested => event_loop.exit(),
            // A minimised window has no size: the surface is left alone until it has one again.
            WindowEvent::Resized(size) if size.width > 0 && size.height > 0 => {
                r.config.width = size.width;
                r.config.height = size.height;
                r.surface.configure(&r.device, &r.config);
            }
            WindowEvent::KeyboardInput { event, .. } => {
                let PhysicalKey::Code(code) = event.physical_key else {
                    return;
                };
                if event.state == ElementState::Released {
                    r.held.remove(&code);
                    return;
                }
                r.held.insert(code);
                if !event.repeat && r.key(code, &self.assets) {
                    event_loop.exit();
                }
            }
            WindowEvent::MouseInput {
                state,
                button: MouseButton::Left,
                ..
            } => r.dragging = (state == ElementState::Pressed).then_some(r.cursor),
            WindowEvent::CursorMoved { position, .. } => {
                r.cursor = Vec2::new(position.x as f32, position.y as f32);
                if let Some(from) = r.dragging {
                    r.camera.drag(r.cursor - from);
                    r.dragging = Some(r.cursor);
                }
            }
            WindowEvent::MouseWheel { delta, .. } => r.camera.scroll(match delta {
                MouseScrollDelta::LineDelta(_, y) => y,
                MouseScrollDelta::PixelDelta(p) => p.y as f32 / 40.0,
            }),
            WindowEvent::RedrawRequested => {
                if let Err(e) = r.frame() {
                    self.result = Err(e);
                    event_loop.exit();
                }
            }
            _ => {}
        }
    }

    fn about_to_wait(&mut self, event_loop: &ActiveEventLoop) {
        if let Some(r) = &self.running {
            if self.seconds.is_some_and(|s| r.started.elapsed() >= s) {
                event_loop.exit();
            } else {
                r.window.request_redraw();
            }
        }
    }

    fn exiting(&mut self, _event_loop: &ActiveEventLoop) {
        if let Some(r) = self.running.take() {
            let result = r.finish(&self.args, &self.assets);
            if self.result.is_ok() {
                self.result = result;
            }
        }
    }
}

const HELP: &str = "keys: Esc quit | Space pause | . step | + - speed | C next clip | ] [ double, halve the crowd | \
                    1-5 shaded, instance, LOD, tier, normals | L shadows | Tab orbit/fly | WASD QE move | drag turn | wheel zoom";

impl App {
    fn open(&self, event_loop: &ActiveEventLoop) -> Result<Running> {
        let window = Arc::new(
            event_loop
                .create_window(
                    Window::default_attributes()
                        .with_title(format!("crowd-demo: {}", self.args.scene_name()))
                        .with_inner_size(winit::dpi::PhysicalSize::new(1280, 720)),
                )
                .context("cannot open a window")?,
        );
        let instance = wgpu::Instance::new(wgpu::InstanceDescriptor::new_with_display_handle_from_env(Box::new(
            event_loop.owned_display_handle(),
        )));
        let surface = instance
            .create_surface(window.clone())
            .context("cannot make a wgpu surface for the window")?;
        let adapter = pollster::block_on(instance.request_adapter(&wgpu::RequestAdapterOptions {
            compatible_surface: Some(&surface),
            ..Default::default()
        }))
        .map_err(|_| anyhow!(NO_ADAPTER))?;
        let info = adapter.get_info();
        let (device, queue) = pollster::block_on(adapter.request_device(&wgpu::DeviceDescriptor {
            label: Some("crowd-demo"),
            required_limits: adapter.limits(),
            // Counts the GPU's work for the stats table where the adapter can.
            required_features: adapter.features() & wgpu::Features::PIPELINE_STATISTICS_QUERY,
            ..Default::default()
        }))
        .with_context(|| format!("the adapter '{}' refused a device", info.name))?;
        let size = window.inner_size();
        let mut config = surface
            .get_default_config(&adapter, size.width.max(1), size.height.max(1))
            .context("the surface does not suit the adapter")?;
        let caps = surface.get_capabilities(&adapter);
        if let Some(&srgb) = caps.formats.iter().find(|f| f.is_srgb()) {
            config.format = srgb;
        }
        surface.configure(&device, &config);
        let path = if self.args.cpu_culled {
            RenderPath::CpuCulled
        } else {
            RenderPath::for_config(
                &device,
                &crowd_gpu::RendererConfig::for_device(
                    &adapter,
                    &device,
                    config.format,
                    Some(crate::stage::DEPTH_FORMAT),
                ),
            )
        };
        let samples = if self.args.no_msaa {
            1
        } else {
            msaa_samples(&adapter, config.format)
        };
        println!(
            "window: {} x {} on {} ({:?}), {:?}, {} path, {samples}x MSAA",
            config.width,
            config.height,
            info.name,
            info.device_type,
            config.format,
            path.name()
        );
        let assets = self.assets.clone();
        let settings = crate::frame_settings(
            &assets,
            path,
            config.height as f32,
            self.scene.camera.fov.to_radians(),
            self.scene.layout.spacing(),
        );
        let crowd = crate::crowd(&assets, settings)?;
        let count = crate::start_count(&self.args, &self.scene)?;
        let mut world = World::new(crowd, assets.clone(), self.scene.clone(), count)?;
        let (centre, extent) = world.bounds();
        let camera = crate::start_camera(&self.scene, &assets, centre, extent);
        let renderer_config = crate::stage::renderer_config(&adapter, &device, config.format, samples);
        let mut stage = Stage::for_world(&device, &queue, renderer_config, path, &world)?;
        stage.set_debug_view(self.args.view.debug_view());
        let controls = Arc::new(Mutex::new(Controls::new(
            camera.frame_camera(config.width as f32 / config.height as f32),
        )));
        let exchange = world.crowd().exchange().clone();
        let sim_controls = controls.clone();
        let sim = std::thread::Builder::new()
            .name("simulation".to_owned())
            .spawn(move || crate::sim::run(&mut world, &sim_controls, Pace::Wall))
            .context("cannot start the simulation thread")?;
        let now = Instant::now();
        Ok(Running {
            window,
            surface,
            adapter_name: format!("{} ({:?})", info.name, info.device_type),
            device,
            queue,
            config,
            stage,
            controls,
            exchange,
            sim: Some(sim),
            camera,
            held: HashSet::new(),
            dragging: None,
            cursor: Vec2::ZERO,
            started: now,
            last_frame: now,
            last_print: now,
            times: RenderTimes::default(),
            stages: FrameStats::default(),
            packets: 0,
            count,
            clip: None,
            drawn: Drawn::default(),
            paused: false,
            speed: 1.0,
        })
    }
}

impl Running {
    /// Handles a key press; true to quit.
    fn key(&mut self, code: KeyCode, assets: &Assets) -> bool {
        let Ok(mut c) = self.controls.lock() else {
            return true;
        };
        let debug = match code {
            KeyCode::Escape => return true,
            KeyCode::Space => {
                c.paused = !c.paused;
                self.paused = c.paused;
                None
            }
            KeyCode::Period => {
                c.single_steps += 1;
                None
            }
            KeyCode::Equal | KeyCode::NumpadAdd => {
                c.speed = (c.speed * 1.25).min(8.0);
                self.speed = c.speed;
                None
            }
            KeyCode::Minus | KeyCode::NumpadSubtract => {
                c.speed = (c.speed / 1.25).max(0.05);
                self.speed = c.speed;
                None
            }
            KeyCode::KeyC => {
                let clips = assets.character.clips().len();
                self.clip = match self.clip {
                    None => Some(0),
                    Some(i) if i + 1 < clips => Some(i + 1),
                    Some(_) => None,
                };
                c.force_clip = Some(self.clip.map(|i| ClipId(i as u16)));
                println!(
                    "clip: {}",
                    self.clip.map_or("the scene's", |i| assets.character.clips()[i].name())
                );
                None
            }
            KeyCode::BracketRight => {
                self.count = (self.count.max(1) * 2).min(crate::scene::MAX_COUNT);
                c.resize = Some(self.count);
                None
            }
            KeyCode::BracketLeft => {
                self.count /= 2;
                c.resize = Some(self.count);
                None
            }
            KeyCode::Digit1 => Some(DebugView::Shaded),
            KeyCode::Digit2 => Some(DebugView::InstanceId),
            KeyCode::Digit3 => Some(DebugView::Lod),
            KeyCode::Digit4 => Some(DebugView::Tier),
            KeyCode::Digit5 => Some(DebugView::Normals),
            KeyCode::Tab => {
                self.camera.toggle_mode();
                None
            }
            KeyCode::KeyL => {
                let on = !self.stage.shadows();
                self.stage.set_shadows(on);
                None
            }
            _ => None,
        };
        drop(c);
        if let Some(v) = debug {
            self.stage.set_debug_view(v);
        }
        false
    }

    /// Draws the next packet.
    fn frame(&mut self) -> Result<()> {
        let dt = self.last_frame.elapsed().as_secs_f32().min(0.1);
        let mut axes = Vec3::ZERO;
        for (key, axis) in [
            (KeyCode::KeyD, Vec3::X),
            (KeyCode::KeyA, Vec3::NEG_X),
            (KeyCode::KeyE, Vec3::Y),
            (KeyCode::KeyQ, Vec3::NEG_Y),
            (KeyCode::KeyW, Vec3::Z),
            (KeyCode::KeyS, Vec3::NEG_Z),
        ] {
            if self.held.contains(&key) {
                axes += axis;
            }
        }
        if axes != Vec3::ZERO {
            self.camera.move_by(axes, dt);
        }
        let (w, h) = (self.config.width, self.config.height);
        if let Ok(mut c) = self.controls.lock() {
            c.camera = self.camera.frame_camera(w as f32 / h as f32);
        }
        let wait = Instant::now();
        let Ok(packet) = self.exchange.begin_read() else {
            // The simulation stopped: its error comes out when it is joined.
            return self.sim_error();
        };
        let wait_ms = wait.elapsed().as_secs_f32() * 1e3;
        self.packets += 1;
        add_stages(&mut self.stages, packet.stats());
        let size = self.window.inner_size();
        if size.width == 0 || size.height == 0 {
            // Minimised: keep the GPU-driven state current, draw nothing.
            self.stage.skip(&self.device, &self.queue, &packet)?;
            return Ok(());
        }
        let texture = match self.surface.get_current_texture() {
            wgpu::CurrentSurfaceTexture::Success(t) | wgpu::CurrentSurfaceTexture::Suboptimal(t) => t,
            wgpu::CurrentSurfaceTexture::Timeout | wgpu::CurrentSurfaceTexture::Occluded => {
                self.stage.skip(&self.device, &self.queue, &packet)?;
                return Ok(());
            }
            wgpu::CurrentSurfaceTexture::Outdated | wgpu::CurrentSurfaceTexture::Lost => {
                self.surface.configure(&self.device, &self.config);
                self.stage.skip(&self.device, &self.queue, &packet)?;
                return Ok(());
            }
            other => anyhow::bail!("the surface gave no frame: {other:?}"),
        };
        let view = texture.texture.create_view(&wgpu::TextureViewDescriptor::default());
        let (prepared, prepare_ms, record_ms) = self.stage.draw(&self.device, &self.queue, &packet, &view, (w, h))?;
        let present = Instant::now();
        self.window.pre_present_notify();
        self.queue.present(texture);
        let second = self.last_print.elapsed() >= Duration::from_secs(1);
        if second {
            // Once a second: what the GPU drew (a readback, which waits for the frame).
            self.drawn = Drawn::of(&self.device, &self.queue, &self.stage, &packet, &prepared)?;
        }
        let stats = *packet.stats();
        drop(packet);
        self.times.wait_ms.push(wait_ms);
        self.times.prepare_ms.push(prepare_ms);
        self.times.record_ms.push(record_ms);
        self.times.present_ms.push(present.elapsed().as_secs_f32() * 1e3);
        self.times.frame_ms.push(self.last_frame.elapsed().as_secs_f32() * 1e3);
        self.times.trim();
        self.last_frame = Instant::now();
        if second {
            self.last_print = Instant::now();
            let recent = &self.times.frame_ms[self.times.frame_ms.len().saturating_sub(120)..];
            let (p50, p99) = (percentile(recent, 50.0), percentile(recent, 99.0));
            let line = format!(
                "{:.1} fps (p50 {p50:.1} ms, p99 {p99:.1} ms) | {} characters | {} | {} | sim step {:.2} ms (cull {:.2}, \
                 pool {:.2}, flatten {:.2}) | render prepare {prepare_ms:.2} ms{}{}",
                if p50 > 0.0 { 1e3 / p50 } else { 0.0 },
                stats.instances,
                self.drawn.summary(),
                self.stage.path().name(),
                stats.stages.cull_ms
                    + stats.stages.pool_ms
                    + stats.stages.unique_ms
                    + stats.stages.flatten_ms
                    + stats.stages.pack_ms
                    + stats.stages.changes_ms,
                stats.stages.cull_ms,
                stats.stages.pool_ms,
                stats.stages.flatten_ms,
                if self.paused { " | paused" } else { "" },
                if (self.speed - 1.0).abs() > 1e-3 {
                    format!(" | speed {:.2}", self.speed)
                } else {
                    String::new()
                },
            );
            println!("{line}");
            self.window.set_title(&format!("crowd-demo | {line}"));
        }
        Ok(())
    }

    /// The simulation's error after it stopped by itself.
    fn sim_error(&mut self) -> Result<()> {
        match self.sim.take().map(JoinHandle::join) {
            Some(Ok(Err(e))) => Err(e.context("the simulation thread failed")),
            Some(Err(_)) => Err(anyhow!("the simulation thread panicked")),
            _ => Err(anyhow!("the simulation stopped")),
        }
    }

    /// Stops the simulation and prints the run's figures.
    fn finish(mut self, args: &Args, _assets: &Assets) -> Result<()> {
        if let Ok(mut c) = self.controls.lock() {
            c.quit = true;
        }
        self.exchange.close();
        let sim = match self.sim.take().map(JoinHandle::join) {
            Some(Ok(r)) => r?,
            Some(Err(_)) => return Err(anyhow!("the simulation thread panicked")),
            None => SimReport::default(),
        };
        let settled = settled(&self.times.frame_ms);
        let p50 = percentile(settled, 50.0);
        let report = Report {
            scene: args.scene_name(),
            model: crate::headless::assets_name(args),
            adapter: self.adapter_name.clone(),
            path: self.stage.path().name().to_owned(),
            target: format!("window {} x {}", self.config.width, self.config.height),
            msaa: self.stage.sample_count(),
            instances: sim.count,
            frames: self.times.frame_ms.len(),
            frame_ms_p50: p50,
            frame_ms_p99: percentile(settled, 99.0),
            fps_p50: if p50 > 0.0 { 1e3 / p50 } else { 0.0 },
            sim_ms: SimStages::of(&sim, &self.stages, self.packets),
            render_ms: RenderStages {
                wait: mean(&self.times.wait_ms),
                prepare: mean(&self.times.prepare_ms),
                record: mean(&self.times.record_ms),
                present: mean(&self.times.present_ms),
            },
            last_frame: self.drawn,
        };
        report.print();
        Ok(())
    }
}
