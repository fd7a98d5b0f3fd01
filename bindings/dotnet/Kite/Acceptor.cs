using System;
using System.Runtime.InteropServices;
using System.Text;
using Kite.Interop;

namespace Kite;

/// <summary>What a server thread's loop has done (counters; final after Stop).</summary>
public readonly record struct ThreadLoad(string Name, ulong Cycles, ulong IdleCycles, long BusyNs, long TotalNs);

/// <summary>
/// A running Kite acceptor with its application in C#: started from a
/// kite-acceptor TOML file or string (docs/acceptor.md) with every model,
/// transport and idle strategy. Start, Shutdown, Stop and Dispose are called
/// from any thread but an engine thread (never from a callback).
/// </summary>
public sealed unsafe class Acceptor : IDisposable
{
    private void* _a;
    private GCHandle _app;

    private Acceptor(void* a, GCHandle app)
    {
        _a = a;
        _app = app;
    }

    /// <summary>
    /// Starts an acceptor from the file's text: listening, every engine thread
    /// started, named, pinned and through <see cref="Application.OnThreadStart"/>.
    /// With app null, the acceptor answers as kite-acceptor does ([app] mode).
    /// </summary>
    /// <param name="toml">the kite-acceptor file's text.</param>
    /// <param name="app">the application, or null.</param>
    /// <param name="name">what error texts call the text (default "&lt;string&gt;").</param>
    /// <exception cref="KiteException">the text is wrong (ErrorConfig), the cell cannot run here
    /// (ErrorUnsupported), or a bind, pin or thread failed (ErrorStart).</exception>
    public static Acceptor Start(string toml, Application? app, string? name = null)
    {
        ArgumentNullException.ThrowIfNull(toml);
        return StartWith(app, (cb, out_) =>
        {
            fixed (byte* t = Utf8Z(toml))
            fixed (byte* n = name is null ? null : Utf8Z(name))
                return Native.AcceptorStartString(t, n, cb, out_);
        }, "cannot start the acceptor");
    }

    /// <summary>Starts an acceptor from a kite-acceptor file; see <see cref="Start"/>.</summary>
    public static Acceptor StartFile(string path, Application? app)
    {
        ArgumentNullException.ThrowIfNull(path);
        return StartWith(app, (cb, out_) =>
        {
            fixed (byte* p = Utf8Z(path))
                return Native.AcceptorStartFile(p, cb, out_);
        }, "cannot start the acceptor from " + path);
    }

    private delegate int StartCall(KiteCallbacks* callbacks, void** handle);

    private static Acceptor StartWith(Application? app, StartCall start, string what)
    {
        Library.EnsureLoaded();
        GCHandle h = app is null ? default : GCHandle.Alloc(app);
        KiteCallbacks cb = app is null ? default : Callbacks.Table(h);
        void* a = null;
        int status = start(app is null ? null : &cb, &a);
        if (status != (int)Status.Ok)
        {
            KiteException e = KiteException.FromLastError((Status)status, what);
            if (h.IsAllocated) h.Free();
            throw e;
        }
        return new Acceptor(a, h);
    }

    /// <summary>The listening port (the configured one, or the kernel's pick for port 0).</summary>
    public int Port => Native.AcceptorPort(Live());

    /// <summary>Configured sessions, in file order.</summary>
    public int SessionCount => (int)Native.AcceptorSessionCount(Live());

    /// <summary>The i-th configured session, for sending from outside a callback.</summary>
    /// <exception cref="ArgumentOutOfRangeException">i is not a session's index.</exception>
    public Session Session(int i)
    {
        void* s = i < 0 ? null : Native.AcceptorSession(Live(), (nuint)i);
        if (s == null) throw new ArgumentOutOfRangeException(nameof(i), $"no session {i} (the acceptor has {SessionCount})");
        return new Session(s, inCallback: false);
    }

    /// <summary>The load of every server thread that serves sessions (not the pool's front door).</summary>
    public ThreadLoad[] ThreadLoads()
    {
        void* a = Live();
        var loads = new ThreadLoad[(int)Native.AcceptorThreadCount(a)];
        for (int i = 0; i < loads.Length; ++i)
        {
            KiteThreadLoad l;
            int status = Native.AcceptorThreadLoad(a, (nuint)i, &l);
            if (status != (int)Status.Ok) throw KiteException.FromLastError((Status)status, "thread load " + i);
            loads[i] = new ThreadLoad(Marshal.PtrToStringUTF8((IntPtr)l.Name) ?? "", l.Cycles, l.IdleCycles, l.BusyNs, l.TotalNs);
        }
        return loads;
    }

    /// <summary>Sends a Logout to every logged-on session, waits up to [app] shutdown_wait_ms for them to close, then stops. Idempotent.</summary>
    public void Shutdown() => Native.AcceptorShutdown(Live());

    /// <summary>Stops at once, joining every engine thread. Idempotent.</summary>
    public void Stop() => Native.AcceptorStop(Live());

    /// <summary>Stops (if running) and frees the acceptor; its sessions die with it.</summary>
    public void Dispose()
    {
        if (_a != null)
        {
            Native.AcceptorFree(_a);
            _a = null;
        }
        // Only now, with every engine thread joined, can no callback need the application.
        if (_app.IsAllocated) _app.Free();
    }

    private void* Live() => _a != null ? _a : throw new ObjectDisposedException(nameof(Acceptor));

    internal static byte[] Utf8Z(string s)
    {
        var b = new byte[Encoding.UTF8.GetByteCount(s) + 1];
        Encoding.UTF8.GetBytes(s, b);
        return b;
    }
}
