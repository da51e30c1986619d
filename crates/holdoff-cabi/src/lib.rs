//! The C side of holdoff's C moderator ABI (`include/holdoff/moderator.h`,
//! version [`ABI_VERSION`]): load a compiled moderator, check its
//! descriptor, and call its functions with a context whose callbacks collect
//! register writes, answer the simulated time and queue work.
//!
//! Models nothing: the moderation semantics (what a write means, when the
//! driver calls) live in `holdoff-core` (`moderation::c_abi`), which wraps an
//! [`Instance`] as a `Moderator`. This crate exists so that the core keeps
//! `forbid(unsafe_code)`: every `unsafe` of the workspace is here.
//!
//! Isolation: C code runs in this process. A call that does not return
//! within its wall-clock limit is ended by a watchdog thread, which prints
//! `holdoff-c-fault: FILE:FN did not return within N ms at t=T ns` to
//! stderr and exits with [`CALL_TIMEOUT_EXIT`]. In a process started with
//! `HOLDOFF_C_CHILD=1`, a fatal signal during a call prints
//! `holdoff-c-fault: FILE:FN crashed with SIGSEGV at t=T ns` and the
//! process dies of that signal. Callers that must survive run the C code
//! in a child process (the Python API does).
//!
//! Units: time [ns]; register values as written.

use std::collections::BTreeMap;
use std::ffi::{c_char, c_void, CStr};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

/// `HOLDOFF_MODERATOR_ABI_VERSION` of the headers this loader speaks.
pub const ABI_VERSION: u32 = 1;
/// Exit status of a process whose C moderator call overran its limit.
pub const CALL_TIMEOUT_EXIT: i32 = 86;
/// Largest per-vector state a descriptor may ask for [bytes].
pub const MAX_STATE_BYTES: u32 = 1 << 20;
/// Register ids `HOLDOFF_REG_*` are 0..REG_COUNT.
pub const REG_COUNT: usize = 6;

/// The counters of one call (`struct holdoff_sample`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct RawSample {
    pub now_ns: u64,
    pub rx_packets: u64,
    pub rx_bytes: u64,
    pub tx_packets: u64,
    pub tx_bytes: u64,
    pub interrupts: u64,
    pub now_jiffies: u64,
    pub vector: u32,
    pub reserved: u32,
}

/// What the moderator knows of its port (`struct holdoff_port`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct RawPort {
    pub link_mbps: u32,
    pub throttle: u32,
    pub rx_fifo_bytes: u32,
    pub vectors: u32,
    pub vector: u32,
    pub hz: u32,
    pub work_delay_ns: u64,
}

type CFn = unsafe extern "C" fn(*mut CCtx);
type CEntry = unsafe extern "C" fn(*mut CCtx, *const RawSample);

#[repr(C)]
struct CCtx {
    abi_version: u32,
    reserved: u32,
    state: *mut c_void,
    port: *const RawPort,
    host: *mut c_void,
    write_reg: extern "C" fn(*mut c_void, u32, u32),
    now_ns: extern "C" fn(*mut c_void) -> u64,
    get_jiffies: extern "C" fn(*mut c_void) -> u64,
    schedule_work: extern "C" fn(*mut c_void, u64),
    param: extern "C" fn(*mut c_void, *const c_char, i64) -> i64,
}

#[repr(C)]
#[derive(Clone, Copy)]
struct CDesc {
    abi_version: u32,
    invocation: u32,
    period_ns: u64,
    state_bytes: u32,
    flags: u32,
    init: Option<CFn>,
    work: Option<CFn>,
}

/// The descriptor's plain fields.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Descriptor {
    /// `HOLDOFF_INVOKE_*` (0 never ... 4 periodic).
    pub invocation: u32,
    pub period_ns: u64,
    pub state_bytes: u32,
    pub flags: u32,
    pub has_init: bool,
    pub has_work: bool,
}

/// What one call did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Outcome {
    /// The last value written to each register id in the call.
    pub writes: [Option<u32>; REG_COUNT],
    /// A bad write (unknown register id), if any.
    pub error: Option<String>,
}

/// What the callbacks of one instance see and collect.
struct HostState {
    now_ns: u64,
    hz: u32,
    work_delay_ns: u64,
    writes: [Option<u32>; REG_COUNT],
    work_at: Option<u64>,
    params: BTreeMap<String, i64>,
    error: Option<String>,
}

fn host<'a>(h: *mut c_void) -> &'a mut HostState {
    // SAFETY: `h` is the `HostState` box of the instance whose call is in
    // progress; the C code got it from the ctx the loader filled in, and no
    // other reference to it is live during the call.
    unsafe { &mut *(h as *mut HostState) }
}

extern "C" fn cb_write_reg(h: *mut c_void, reg: u32, value: u32) {
    let st = host(h);
    match st.writes.get_mut(reg as usize) {
        Some(w) => *w = Some(value),
        None => {
            st.error.get_or_insert_with(|| {
                format!("wrote register id {reg}; ids are HOLDOFF_REG_* (0 to 5)")
            });
        }
    }
}

extern "C" fn cb_now_ns(h: *mut c_void) -> u64 {
    host(h).now_ns
}

/// Jiffies at `hz` of the instant `now_ns` (the tick count since time 0).
pub fn jiffies(now_ns: u64, hz: u32) -> u64 {
    (now_ns as u128 * hz as u128 / 1_000_000_000) as u64
}

extern "C" fn cb_jiffies(h: *mut c_void) -> u64 {
    let st = host(h);
    jiffies(st.now_ns, st.hz)
}

extern "C" fn cb_schedule_work(h: *mut c_void, delay_ns: u64) {
    let st = host(h);
    let delay = if delay_ns == u64::MAX {
        st.work_delay_ns
    } else {
        delay_ns
    };
    if st.work_at.is_none() {
        st.work_at = Some(st.now_ns.saturating_add(delay));
    }
}

extern "C" fn cb_param(h: *mut c_void, name: *const c_char, dflt: i64) -> i64 {
    if name.is_null() {
        return dflt;
    }
    // SAFETY: the C caller passes a NUL-terminated string (the ABI says so).
    let name = unsafe { CStr::from_ptr(name) }.to_string_lossy();
    host(h).params.get(name.as_ref()).copied().unwrap_or(dflt)
}

/// Loaded libraries by path, kept for the life of the process (a C library
/// cannot be unloaded safely while a function pointer into it may be live).
fn library(so: &Path) -> Result<Arc<libloading::Library>, String> {
    static LIBS: OnceLock<Mutex<BTreeMap<PathBuf, Arc<libloading::Library>>>> = OnceLock::new();
    let mut libs = LIBS
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|p| p.into_inner());
    if let Some(l) = libs.get(so) {
        return Ok(l.clone());
    }
    // SAFETY: loading runs the object's constructors; the object was built
    // from the user's own source, which is what the user asked to run.
    let lib = unsafe { libloading::Library::new(so) }
        .map_err(|e| format!("cannot load {}: {e}", so.display()))?;
    let lib = Arc::new(lib);
    libs.insert(so.to_path_buf(), lib.clone());
    Ok(lib)
}

/// One vector's loaded moderator: its own state block and context.
pub struct Instance {
    _lib: Arc<libloading::Library>,
    entry: CEntry,
    desc: CDesc,
    current: *mut *mut CCtx,
    label: Arc<str>,
    limit: Duration,
    _state: Vec<u64>,
    _port: Box<RawPort>,
    host: Box<HostState>,
    ctx: Box<CCtx>,
}

impl Instance {
    /// Load `entry` of the shared object `so`; `label` (`file.c:entry`)
    /// names it in messages; `limit` is the wall-clock limit of one call.
    pub fn load(
        so: &Path,
        entry: &str,
        label: &str,
        port: RawPort,
        params: BTreeMap<String, i64>,
        limit: Duration,
    ) -> Result<Instance, String> {
        let lib = library(so)?;
        let file = label.rsplit_once(':').map(|x| x.0).unwrap_or(label);
        let sym = |name: &str| -> Option<*mut c_void> {
            // SAFETY: the symbol is only taken as an address here; what is
            // read through it is checked below (the version first).
            unsafe { lib.get::<*mut c_void>(name.as_bytes()) }
                .ok()
                .map(|s| *s)
        };
        let entry_ptr = sym(entry).ok_or_else(|| {
            format!("{file} has no exported function `{entry}` (is it `static`, or misspelt?)")
        })?;
        let desc_name = format!("{entry}_holdoff_desc");
        let desc_ptr = sym(&desc_name).ok_or_else(|| {
            format!(
                "{file} has no `{desc_name}`: declare the moderator with \
                 HOLDOFF_MODERATOR({entry}, ...) from holdoff/moderator.h"
            )
        })?;
        let current = sym("holdoff_current").ok_or_else(|| {
            format!(
                "{file} has no `holdoff_current`: use HOLDOFF_MODERATOR from holdoff/moderator.h"
            )
        })? as *mut *mut CCtx;
        // SAFETY: the descriptor symbol is a `struct holdoff_moderator_desc`
        // (the HOLDOFF_MODERATOR macro defines it); its first field is the
        // version, which every ABI version keeps first.
        let version = unsafe { *(desc_ptr as *const u32) };
        if version != ABI_VERSION {
            return Err(format!(
                "{file}: `{desc_name}` has ABI version {version}; this holdoff speaks version \
                 {ABI_VERSION} (rebuild against its include/holdoff/moderator.h)"
            ));
        }
        // SAFETY: version 1, whose layout `CDesc` mirrors.
        let desc = unsafe { *(desc_ptr as *const CDesc) };
        if desc.state_bytes > MAX_STATE_BYTES {
            return Err(format!(
                "{file}: `{desc_name}` asks for {} bytes of state; at most {MAX_STATE_BYTES}",
                desc.state_bytes
            ));
        }
        if desc.invocation > 4 || (desc.invocation == 4 && desc.period_ns == 0) {
            return Err(format!(
                "{file}: `{desc_name}` has invocation {} with period {} ns; use a \
                 HOLDOFF_INVOKE_* value (periodic needs a period above 0)",
                desc.invocation, desc.period_ns
            ));
        }
        // SAFETY: `entry_ptr` is the address of the exported function, whose
        // signature the ABI fixes (`holdoff_entry_fn`).
        let entry_fn = unsafe { std::mem::transmute::<*mut c_void, CEntry>(entry_ptr) };
        let mut state = vec![0u64; (desc.state_bytes as usize).div_ceil(8)];
        let port = Box::new(port);
        let mut host = Box::new(HostState {
            now_ns: 0,
            hz: port.hz,
            work_delay_ns: port.work_delay_ns,
            writes: [None; REG_COUNT],
            work_at: None,
            params,
            error: None,
        });
        let ctx = Box::new(CCtx {
            abi_version: ABI_VERSION,
            reserved: 0,
            state: state.as_mut_ptr() as *mut c_void,
            port: &*port,
            host: &mut *host as *mut HostState as *mut c_void,
            write_reg: cb_write_reg,
            now_ns: cb_now_ns,
            get_jiffies: cb_jiffies,
            schedule_work: cb_schedule_work,
            param: cb_param,
        });
        Ok(Instance {
            _lib: lib,
            entry: entry_fn,
            desc,
            current,
            label: label.into(),
            limit,
            _state: state,
            _port: port,
            host,
            ctx,
        })
    }

    /// The descriptor's fields.
    pub fn descriptor(&self) -> Descriptor {
        Descriptor {
            invocation: self.desc.invocation,
            period_ns: self.desc.period_ns,
            state_bytes: self.desc.state_bytes,
            flags: self.desc.flags,
            has_init: self.desc.init.is_some(),
            has_work: self.desc.work.is_some(),
        }
    }

    /// Call `f` with the context at simulated time `now_ns`, under the watchdog.
    ///
    /// One call at a time in the process (`CALL`): the module's
    /// `holdoff_current`, the watchdog's slot and the crash handler's label
    /// are one per process, so two threads calling C moderators at once (runs
    /// in threads, as the test harness runs tests) would hand each other's
    /// context to the shims.
    fn call(&mut self, now_ns: u64, f: impl FnOnce(*mut CCtx)) -> Outcome {
        let _one = CALL.lock().unwrap_or_else(|p| p.into_inner());
        self.host.now_ns = now_ns;
        self.host.writes = [None; REG_COUNT];
        let ctx: *mut CCtx = &mut *self.ctx;
        watchdog();
        crash_handler::enter(&self.label, now_ns);
        *WATCH.lock().unwrap_or_else(|p| p.into_inner()) = Some(Watch {
            label: self.label.clone(),
            t_ns: now_ns,
            start: Instant::now(),
            limit: self.limit,
        });
        // SAFETY: `current` is the module's `holdoff_current` pointer
        // variable (defined by HOLDOFF_MODERATOR); the ctx outlives the call.
        unsafe { *self.current = ctx };
        f(ctx);
        *WATCH.lock().unwrap_or_else(|p| p.into_inner()) = None;
        crash_handler::leave();
        Outcome {
            writes: std::mem::replace(&mut self.host.writes, [None; REG_COUNT]),
            error: self.host.error.take(),
        }
    }

    /// The descriptor's `init` at interface up (no-op without one).
    pub fn init(&mut self) -> Outcome {
        let Some(init) = self.desc.init else {
            return Outcome::default();
        };
        let out = self.call(0, |ctx| {
            // SAFETY: ABI init function called with the ctx it was built for.
            unsafe { init(ctx) }
        });
        self.host.work_at = None;
        out
    }

    /// The entry function on one sample.
    pub fn on_sample(&mut self, s: &RawSample) -> Outcome {
        let entry = self.entry;
        let s = *s;
        self.call(s.now_ns, |ctx| {
            // SAFETY: ABI entry called with its ctx and a live sample.
            unsafe { entry(ctx, &s) }
        })
    }

    /// When the work item queued by the last call runs [ns]; taken once.
    /// None without a `work` function.
    pub fn take_work(&mut self) -> Option<u64> {
        let at = self.host.work_at.take();
        self.desc.work.and(at)
    }

    /// The descriptor's work function, run at `now_ns`.
    pub fn run_work(&mut self, now_ns: u64) -> Outcome {
        let Some(work) = self.desc.work else {
            return Outcome::default();
        };
        self.call(now_ns, |ctx| {
            // SAFETY: ABI work function called with its ctx.
            unsafe { work(ctx) }
        })
    }
}

/// The call in progress, for the watchdog.
struct Watch {
    label: Arc<str>,
    t_ns: u64,
    start: Instant,
    limit: Duration,
}

static WATCH: Mutex<Option<Watch>> = Mutex::new(None);

/// Held for the length of each C call (`Module::call`).
static CALL: Mutex<()> = Mutex::new(());

/// Start the watchdog thread once: it ends the process when a call overruns.
fn watchdog() {
    static STARTED: OnceLock<()> = OnceLock::new();
    STARTED.get_or_init(|| {
        // Without the thread a looping call would hang; spawning rarely fails.
        let _ = std::thread::Builder::new()
            .name("holdoff-c-watchdog".into())
            .spawn(|| loop {
                std::thread::sleep(Duration::from_millis(20));
                let w = WATCH.lock().unwrap_or_else(|p| p.into_inner());
                if let Some(w) = w.as_ref() {
                    if w.start.elapsed() > w.limit {
                        eprintln!(
                            "holdoff-c-fault: {} did not return within {} ms at t={} ns",
                            w.label,
                            w.limit.as_millis(),
                            w.t_ns
                        );
                        std::process::exit(CALL_TIMEOUT_EXIT);
                    }
                }
            });
    });
}

/// Names the function and time of a fatal signal in a child process
/// (`HOLDOFF_C_CHILD=1`).
mod crash_handler {
    use std::sync::atomic::{AtomicPtr, AtomicU64, AtomicUsize, Ordering};
    use std::sync::{Arc, OnceLock};

    static LABEL: AtomicPtr<u8> = AtomicPtr::new(std::ptr::null_mut());
    static LABEL_LEN: AtomicUsize = AtomicUsize::new(0);
    static T_NS: AtomicU64 = AtomicU64::new(0);
    static ENABLED: OnceLock<bool> = OnceLock::new();

    fn enabled() -> bool {
        *ENABLED.get_or_init(|| {
            let on = std::env::var("HOLDOFF_C_CHILD").is_ok_and(|v| v == "1");
            if on {
                install();
            }
            on
        })
    }

    /// A call of `label` at `t_ns` starts.
    pub(super) fn enter(label: &Arc<str>, t_ns: u64) {
        if !enabled() {
            return;
        }
        // The label stays alive: its instance holds it while the call runs.
        LABEL_LEN.store(label.len(), Ordering::Relaxed);
        T_NS.store(t_ns, Ordering::Relaxed);
        LABEL.store(label.as_ptr() as *mut u8, Ordering::Release);
    }

    /// The call returned.
    pub(super) fn leave() {
        if enabled() {
            LABEL.store(std::ptr::null_mut(), Ordering::Release);
        }
    }

    fn put(buf: &mut [u8; 512], n: &mut usize, bytes: &[u8]) {
        for &b in bytes {
            if *n < buf.len() {
                buf[*n] = b;
                *n += 1;
            }
        }
    }

    extern "C" fn on_signal(sig: libc::c_int) {
        let mut buf = [0u8; 512];
        let mut n = 0;
        let ptr = LABEL.load(Ordering::Acquire);
        if !ptr.is_null() {
            let len = LABEL_LEN.load(Ordering::Relaxed);
            // SAFETY: the label is alive (see `enter`) and `len` bytes long.
            let label = unsafe { std::slice::from_raw_parts(ptr, len) };
            put(&mut buf, &mut n, b"holdoff-c-fault: ");
            put(&mut buf, &mut n, label);
            put(&mut buf, &mut n, b" crashed with ");
            let name: &[u8] = match sig {
                libc::SIGSEGV => b"SIGSEGV",
                libc::SIGBUS => b"SIGBUS",
                libc::SIGFPE => b"SIGFPE",
                _ => b"SIGILL",
            };
            put(&mut buf, &mut n, name);
            put(&mut buf, &mut n, b" at t=");
            let mut t = T_NS.load(Ordering::Relaxed);
            let mut digits = [0u8; 20];
            let mut d = digits.len();
            loop {
                d -= 1;
                digits[d] = b'0' + (t % 10) as u8;
                t /= 10;
                if t == 0 {
                    break;
                }
            }
            put(&mut buf, &mut n, &digits[d..]);
            put(&mut buf, &mut n, b" ns\n");
            // SAFETY: write(2) is async-signal-safe; `buf` holds `n` bytes.
            unsafe {
                libc::write(2, buf.as_ptr() as *const libc::c_void, n);
            }
        }
        // SAFETY: restoring the default action and re-raising are
        // async-signal-safe; the process then dies of the same signal.
        unsafe {
            libc::signal(sig, libc::SIG_DFL);
            libc::raise(sig);
        }
    }

    fn install() {
        for sig in [libc::SIGSEGV, libc::SIGBUS, libc::SIGFPE, libc::SIGILL] {
            // SAFETY: installs a handler that only makes async-signal-safe calls.
            unsafe {
                libc::signal(sig, on_signal as *const () as libc::sighandler_t);
            }
        }
    }
}
