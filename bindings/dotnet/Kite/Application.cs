using System;
using System.Runtime.InteropServices;
using Kite.Interop;

namespace Kite;

/// <summary>An engine thread as it reported itself, named and pinned; valid during the callback only.</summary>
public readonly unsafe ref struct ThreadInfo
{
    private readonly KiteThreadInfo* _t;

    internal ThreadInfo(KiteThreadInfo* t) => _t = t;

    /// <summary>"kite-single", "kite-pool-0", ... as UTF-8 bytes.</summary>
    public ReadOnlySpan<byte> NameBytes => System.Runtime.InteropServices.MemoryMarshal.CreateReadOnlySpanFromNullTerminated(_t->Name);
    /// <summary>The name as a string (allocates).</summary>
    public string Name => Marshal.PtrToStringUTF8((IntPtr)_t->Name) ?? "";
    /// <summary>The thread's id (gettid()).</summary>
    public int Tid => _t->Tid;
    /// <summary>The core it runs on after pinning.</summary>
    public int Cpu => _t->Cpu;
    /// <summary>Pinned to its configured core.</summary>
    public bool Pinned => _t->Pinned != 0;
}

/// <summary>
/// The application Kite's engine threads call: override what you need.
/// Each call comes on an engine thread (attached to the runtime by its first
/// call, which is <see cref="OnThreadStart"/>, made before the start call
/// returns); a session's calls come from one thread, never two at once;
/// different sessions may be called concurrently (pool, shard). An exception
/// that leaves a callback is caught at the boundary (it never reaches native
/// code) and passed to <see cref="OnCallbackError"/>.
/// </summary>
public abstract class Application
{
    private long _callbackErrors;

    /// <summary>First call on each engine thread, after it is named and pinned.</summary>
    public virtual void OnThreadStart(in ThreadInfo thread) { }

    /// <summary>Last call on each engine thread, after its last session's logout.</summary>
    public virtual void OnThreadStop(in ThreadInfo thread) { }

    /// <summary>The session logged on.</summary>
    public virtual void OnLogon(Session session) { }

    /// <summary>The session left the logged-on state; reason is valid during the call.</summary>
    public virtual void OnLogout(Session session, ReadOnlySpan<byte> reason) { }

    /// <summary>
    /// An application message, in sequence, after the session's checks. Answer
    /// it with <see cref="Session.Send"/> (or <see cref="Session.Reject"/>)
    /// from inside this call. The message is borrowed: valid during this call only.
    /// </summary>
    public abstract void OnMessage(Session session, in Message message);

    /// <summary>How many exceptions callbacks have thrown so far.</summary>
    public long CallbackErrors => System.Threading.Interlocked.Read(ref _callbackErrors);

    /// <summary>
    /// An exception left a callback (it was stopped at the boundary). The
    /// default writes one line on stderr. Runs on the engine thread; must not
    /// throw (what it throws is dropped).
    /// </summary>
    public virtual void OnCallbackError(string callback, Exception error) =>
        Console.Error.WriteLine($"kite: {GetType().Name}.{callback} threw {error.GetType().Name}: {error.Message}");

    internal void CountError() => System.Threading.Interlocked.Increment(ref _callbackErrors);
}
