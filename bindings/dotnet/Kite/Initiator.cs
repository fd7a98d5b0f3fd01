using System;
using System.Runtime.InteropServices;
using Kite.Interop;

namespace Kite;

/// <summary>
/// Kite initiator sessions with their application in C#: started from a file
/// in kite-acceptor's format whose [[session]] tables have ConnectionType =
/// "initiator", SocketConnectHost and SocketConnectPort. Each session connects
/// once, at start; the Logon follows on its thread. Start, Shutdown, Stop and
/// Dispose are called from any thread but an engine thread.
/// </summary>
public sealed unsafe class Initiator : IDisposable
{
    private void* _i;
    private GCHandle _app;

    private Initiator(void* i, GCHandle app)
    {
        _i = i;
        _app = app;
    }

    /// <summary>Starts the initiator sessions of the file's text.</summary>
    /// <exception cref="KiteException">the text is wrong, or a connection or thread failed.</exception>
    public static Initiator Start(string toml, Application? app, string? name = null)
    {
        ArgumentNullException.ThrowIfNull(toml);
        Library.EnsureLoaded();
        GCHandle h = app is null ? default : GCHandle.Alloc(app);
        KiteCallbacks cb = app is null ? default : Callbacks.Table(h);
        void* i = null;
        int status;
        fixed (byte* t = Acceptor.Utf8Z(toml))
        fixed (byte* n = name is null ? null : Acceptor.Utf8Z(name))
            status = Native.InitiatorStartString(t, n, app is null ? null : &cb, &i);
        if (status != (int)Status.Ok)
        {
            KiteException e = KiteException.FromLastError((Status)status, "cannot start the initiator");
            if (h.IsAllocated) h.Free();
            throw e;
        }
        return new Initiator(i, h);
    }

    /// <summary>Configured sessions, in file order.</summary>
    public int SessionCount => (int)Native.InitiatorSessionCount(Live());

    /// <summary>The i-th configured session, for sending from outside a callback.</summary>
    /// <exception cref="ArgumentOutOfRangeException">i is not a session's index.</exception>
    public Session Session(int i)
    {
        void* s = i < 0 ? null : Native.InitiatorSession(Live(), (nuint)i);
        if (s == null) throw new ArgumentOutOfRangeException(nameof(i), $"no session {i} (the initiator has {SessionCount})");
        return new Session(s, inCallback: false);
    }

    /// <summary>Logout to every logged-on session, waits up to waitMs for the disconnects, then stops. Idempotent.</summary>
    public void Shutdown(int waitMs) => Native.InitiatorShutdown(Live(), waitMs);

    /// <summary>Joins every thread. Idempotent.</summary>
    public void Stop() => Native.InitiatorStop(Live());

    /// <summary>Stops (if running) and frees the sessions.</summary>
    public void Dispose()
    {
        if (_i != null)
        {
            Native.InitiatorFree(_i);
            _i = null;
        }
        if (_app.IsAllocated) _app.Free();
    }

    private void* Live() => _i != null ? _i : throw new ObjectDisposedException(nameof(Initiator));
}
