using System;
using System.Runtime.InteropServices;
using Kite.Interop;

namespace Kite;

/// <summary>
/// One configured FIX session of an <see cref="Acceptor"/> or
/// <see cref="Initiator"/>: a handle that stays the same across reconnects and
/// lives as long as its owner (until Dispose). A value type over libkite's
/// pointer; copying it is free.
/// </summary>
public readonly unsafe struct Session : IEquatable<Session>
{
    // Longest MsgType accepted by Send (FIX's are at most a few characters).
    private const int MaxMsgType = 15;

    private readonly void* _s;
    // True for the Session handed to a callback: the caller is then the
    // session's own thread, and Send takes libkite's in-callback path.
    private readonly bool _inCallback;

    internal Session(void* s, bool inCallback)
    {
        _s = s;
        _inCallback = inCallback;
    }

    /// <summary>libkite's kite_session pointer, for a caller's own calls into the C API.</summary>
    public nint Handle => (nint)_s;

    /// <summary>Whether this is a real session (not default).</summary>
    public bool IsValid => _s != null;

    /// <summary>"FIX.4.4:KITE->BENCH0". Allocates a string: not for the hot path.</summary>
    public string Id => Marshal.PtrToStringUTF8((IntPtr)Native.SessionId(_s)) ?? "";

    /// <summary>The session's position in its configuration file (0-based).</summary>
    public int Index => (int)Native.SessionIndex(_s);

    /// <summary>Whether the session is logged on (a snapshot from another thread).</summary>
    public bool LoggedOn => Native.SessionLoggedOn(_s) != 0;

    /// <summary>
    /// Sends an application message: MsgType (35) and the body, the fields
    /// after the standard header as "tag=value\x01" bytes (<see cref="FieldWriter"/>
    /// writes them); the session adds the header and trailer.
    /// From inside one of this session's callbacks the message is written at
    /// once (<see cref="Status.Stored"/>: kept for the peer's resend when the
    /// connection cannot take it now); from any other thread it is queued for
    /// the session's thread (<see cref="Status.BackPressured"/> when the queue
    /// is full, <see cref="Status.NotLoggedOn"/> when not logged on). Never throws;
    /// allocates nothing.
    /// </summary>
    public Status Send(ReadOnlySpan<byte> msgType, ReadOnlySpan<byte> body)
    {
        if (_s == null || msgType.Length == 0 || msgType.Length > MaxMsgType) return Status.ErrorArgument;
        byte* type = stackalloc byte[MaxMsgType + 1];
        msgType.CopyTo(new Span<byte>(type, MaxMsgType));
        type[msgType.Length] = 0;
        fixed (byte* b = body)
        {
            return (Status)(_inCallback
                ? Native.SessionSendInCallback(_s, type, b, (nuint)body.Length)
                : Native.SessionSend(_s, type, b, (nuint)body.Length));
        }
    }

    /// <summary>
    /// Answers <paramref name="message"/> with a BusinessMessageReject (35=j:
    /// RefSeqNum, RefMsgType, BusinessRejectReason = reason, Text). From inside
    /// this session's OnMessage only. text is ASCII, at most 127 bytes (longer is cut).
    /// </summary>
    public Status Reject(in Message message, int reason, ReadOnlySpan<byte> text = default)
    {
        if (_s == null) return Status.ErrorArgument;
        byte* t = stackalloc byte[128];
        int n = Math.Min(text.Length, 127);
        text[..n].CopyTo(new Span<byte>(t, 127));
        t[n] = 0;
        return (Status)Native.SessionReject(_s, message.Handle, reason, n == 0 ? null : t);
    }

    /// <summary>The BusinessRejectReason (380) for a message type the application does not handle.</summary>
    public const int UnsupportedMessageType = 3;

    /// <inheritdoc/>
    public bool Equals(Session other) => _s == other._s;
    /// <inheritdoc/>
    public override bool Equals(object? obj) => obj is Session s && Equals(s);
    /// <inheritdoc/>
    public override int GetHashCode() => ((IntPtr)_s).GetHashCode();
    /// <summary>Same session.</summary>
    public static bool operator ==(Session a, Session b) => a._s == b._s;
    /// <summary>Different sessions.</summary>
    public static bool operator !=(Session a, Session b) => a._s != b._s;
}
