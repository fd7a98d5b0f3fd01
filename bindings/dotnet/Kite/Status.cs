using System;
using System.Runtime.InteropServices;
using Kite.Interop;

namespace Kite;

/// <summary>What a libkite call returned (kite.h's <c>kite_status</c>).</summary>
public enum Status
{
    /// <summary>Done.</summary>
    Ok = 0,
    /// <summary>A null handle or pointer, an index out of range.</summary>
    ErrorArgument = 1,
    /// <summary>The TOML file or string is wrong; the text names file, table and setting.</summary>
    ErrorConfig = 2,
    /// <summary>Could not bind, pin or start a thread, or connect (initiator).</summary>
    ErrorStart = 3,
    /// <summary>A transport or model this build or machine cannot run.</summary>
    ErrorUnsupported = 4,
    /// <summary>The call does not fit the handle's state.</summary>
    ErrorState = 5,
    /// <summary>Send: the session is not logged on; nothing sent.</summary>
    NotLoggedOn = 6,
    /// <summary>Send: no room now; nothing sent, try again.</summary>
    BackPressured = 7,
    /// <summary>Send: the message exceeds the session's send room; nothing sent.</summary>
    TooLarge = 8,
    /// <summary>Send from a callback: stored under its MsgSeqNum, reaches the peer by resend.</summary>
    Stored = 9,
}

/// <summary>A libkite call that failed at set-up (start, configuration); never thrown on the hot path.</summary>
public sealed class KiteException : Exception
{
    /// <summary>The status the call returned.</summary>
    public Status Status { get; }

    /// <summary>An exception with the status and the text libkite gave.</summary>
    public KiteException(Status status, string message) : base(message) => Status = status;

    // The calling thread's last error text, read right after the failed call.
    internal static unsafe KiteException FromLastError(Status status, string what)
    {
        string text = Marshal.PtrToStringUTF8((IntPtr)Native.LastError()) ?? "";
        if (text.Length == 0) text = Marshal.PtrToStringUTF8((IntPtr)Native.StatusName((int)status)) ?? status.ToString();
        return new KiteException(status, what + ": " + text);
    }
}
