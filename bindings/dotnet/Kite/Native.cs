using System;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;

namespace Kite.Interop;

// The C API (include/kite/kite.h), declared one to one. Layouts are the C
// structs' with the platform's natural alignment (LP64).

[StructLayout(LayoutKind.Sequential)]
internal unsafe struct KiteStr
{
    public byte* Data;
    public nuint Size;
}

[StructLayout(LayoutKind.Sequential)]
internal struct KiteField
{
    public uint Tag;
    public uint Offset;
    public uint Length;
}

[StructLayout(LayoutKind.Sequential)]
internal unsafe struct KiteMessage
{
    public byte* Frame;
    public uint FrameLength;
    public KiteField* Fields;
    public uint FieldCount;
    public KiteStr BeginString;
    public KiteStr MsgType;
    public KiteStr SenderCompId;
    public KiteStr TargetCompId;
    public KiteStr SendingTime;
    public ulong MsgSeqNum;
    public int PossDup;
    public int PossResend;
    public long TimeNs;
}

[StructLayout(LayoutKind.Sequential)]
internal unsafe struct KiteThreadInfo
{
    public byte* Name;
    public int Tid;
    public int Cpu;
    public int Pinned;
}

[StructLayout(LayoutKind.Sequential)]
internal unsafe struct KiteCallbacks
{
    public nuint Size;
    public void* User;
    public delegate* unmanaged[Cdecl]<void*, KiteThreadInfo*, void> OnThreadStart;
    public delegate* unmanaged[Cdecl]<void*, KiteThreadInfo*, void> OnThreadStop;
    public delegate* unmanaged[Cdecl]<void*, void*, void> OnLogon;
    public delegate* unmanaged[Cdecl]<void*, void*, byte*, void> OnLogout;
    public delegate* unmanaged[Cdecl]<void*, void*, KiteMessage*, void> OnMessage;
}

[StructLayout(LayoutKind.Sequential)]
internal unsafe struct KiteThreadLoad
{
    public byte* Name;
    public ulong Cycles;
    public ulong IdleCycles;
    public long BusyNs;
    public long TotalNs;
}

internal static unsafe partial class Native
{
    internal const string Library = "kite";
    internal const int VersionMajor = 0;

    [LibraryImport(Library, EntryPoint = "kite_version")]
    internal static partial byte* Version();

    [LibraryImport(Library, EntryPoint = "kite_version_number")]
    internal static partial int VersionNumber();

    [LibraryImport(Library, EntryPoint = "kite_last_error")]
    internal static partial byte* LastError();

    [LibraryImport(Library, EntryPoint = "kite_status_name")]
    internal static partial byte* StatusName(int status);

    [LibraryImport(Library, EntryPoint = "kite_acceptor_start_file")]
    internal static partial int AcceptorStartFile(byte* path, KiteCallbacks* callbacks, void** acceptor);

    [LibraryImport(Library, EntryPoint = "kite_acceptor_start_string")]
    internal static partial int AcceptorStartString(byte* toml, byte* name, KiteCallbacks* callbacks, void** acceptor);

    [LibraryImport(Library, EntryPoint = "kite_acceptor_port")]
    internal static partial ushort AcceptorPort(void* acceptor);

    [LibraryImport(Library, EntryPoint = "kite_acceptor_session_count")]
    internal static partial nuint AcceptorSessionCount(void* acceptor);

    [LibraryImport(Library, EntryPoint = "kite_acceptor_session")]
    internal static partial void* AcceptorSession(void* acceptor, nuint index);

    [LibraryImport(Library, EntryPoint = "kite_acceptor_shutdown")]
    internal static partial void AcceptorShutdown(void* acceptor);

    [LibraryImport(Library, EntryPoint = "kite_acceptor_stop")]
    internal static partial void AcceptorStop(void* acceptor);

    [LibraryImport(Library, EntryPoint = "kite_acceptor_free")]
    internal static partial void AcceptorFree(void* acceptor);

    [LibraryImport(Library, EntryPoint = "kite_acceptor_thread_count")]
    internal static partial nuint AcceptorThreadCount(void* acceptor);

    [LibraryImport(Library, EntryPoint = "kite_acceptor_thread_load")]
    internal static partial int AcceptorThreadLoad(void* acceptor, nuint index, KiteThreadLoad* load);

    [LibraryImport(Library, EntryPoint = "kite_initiator_start_file")]
    internal static partial int InitiatorStartFile(byte* path, KiteCallbacks* callbacks, void** initiator);

    [LibraryImport(Library, EntryPoint = "kite_initiator_start_string")]
    internal static partial int InitiatorStartString(byte* toml, byte* name, KiteCallbacks* callbacks, void** initiator);

    [LibraryImport(Library, EntryPoint = "kite_initiator_session_count")]
    internal static partial nuint InitiatorSessionCount(void* initiator);

    [LibraryImport(Library, EntryPoint = "kite_initiator_session")]
    internal static partial void* InitiatorSession(void* initiator, nuint index);

    [LibraryImport(Library, EntryPoint = "kite_initiator_shutdown")]
    internal static partial void InitiatorShutdown(void* initiator, int waitMs);

    [LibraryImport(Library, EntryPoint = "kite_initiator_stop")]
    internal static partial void InitiatorStop(void* initiator);

    [LibraryImport(Library, EntryPoint = "kite_initiator_free")]
    internal static partial void InitiatorFree(void* initiator);

    // The hot path's calls: made on an engine thread from inside a callback,
    // short and never blocking or calling back, so they skip the GC
    // transition (a GC waits for them as for any managed code).
    [LibraryImport(Library, EntryPoint = "kite_session_send")]
    [SuppressGCTransition]
    internal static partial int SessionSendInCallback(void* session, byte* msgType, byte* body, nuint bodyLength);

    [LibraryImport(Library, EntryPoint = "kite_session_send")]
    internal static partial int SessionSend(void* session, byte* msgType, byte* body, nuint bodyLength);

    [LibraryImport(Library, EntryPoint = "kite_session_reject")]
    internal static partial int SessionReject(void* session, KiteMessage* message, int reason, byte* text);

    [LibraryImport(Library, EntryPoint = "kite_session_id")]
    internal static partial byte* SessionId(void* session);

    [LibraryImport(Library, EntryPoint = "kite_session_index")]
    [SuppressGCTransition]
    internal static partial nuint SessionIndex(void* session);

    [LibraryImport(Library, EntryPoint = "kite_session_logged_on")]
    [SuppressGCTransition]
    internal static partial int SessionLoggedOn(void* session);

    [LibraryImport(Library, EntryPoint = "kite_session_set_user")]
    internal static partial void SessionSetUser(void* session, void* user);

    [LibraryImport(Library, EntryPoint = "kite_session_user")]
    [SuppressGCTransition]
    internal static partial void* SessionUser(void* session);
}
