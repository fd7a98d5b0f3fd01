using System;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using Kite.Interop;

namespace Kite;

// The functions libkite calls. Each turns its user pointer back into the
// Application (a GCHandle: no allocation) and stops every exception here, so
// that none unwinds into native frames.
internal static unsafe class Callbacks
{
    internal static KiteCallbacks Table(GCHandle app) => new()
    {
        Size = (nuint)sizeof(KiteCallbacks),
        User = (void*)GCHandle.ToIntPtr(app),
        OnThreadStart = &ThreadStart,
        OnThreadStop = &ThreadStop,
        OnLogon = &Logon,
        OnLogout = &Logout,
        OnMessage = &MessageIn,
    };

    private static Application App(void* user) => Unsafe.As<Application>(GCHandle.FromIntPtr((IntPtr)user).Target!);

    [UnmanagedCallersOnly(CallConvs = new[] { typeof(CallConvCdecl) })]
    private static void ThreadStart(void* user, KiteThreadInfo* thread)
    {
        Application? app = null;
        try
        {
            app = App(user);
            app.OnThreadStart(new ThreadInfo(thread));
        }
        catch (Exception e)
        {
            Fault(app, nameof(Application.OnThreadStart), e);
        }
    }

    [UnmanagedCallersOnly(CallConvs = new[] { typeof(CallConvCdecl) })]
    private static void ThreadStop(void* user, KiteThreadInfo* thread)
    {
        Application? app = null;
        try
        {
            app = App(user);
            app.OnThreadStop(new ThreadInfo(thread));
        }
        catch (Exception e)
        {
            Fault(app, nameof(Application.OnThreadStop), e);
        }
    }

    [UnmanagedCallersOnly(CallConvs = new[] { typeof(CallConvCdecl) })]
    private static void Logon(void* user, void* session)
    {
        Application? app = null;
        try
        {
            app = App(user);
            app.OnLogon(new Session(session, inCallback: true));
        }
        catch (Exception e)
        {
            Fault(app, nameof(Application.OnLogon), e);
        }
    }

    [UnmanagedCallersOnly(CallConvs = new[] { typeof(CallConvCdecl) })]
    private static void Logout(void* user, void* session, byte* reason)
    {
        Application? app = null;
        try
        {
            app = App(user);
            ReadOnlySpan<byte> why = reason == null ? default : MemoryMarshal.CreateReadOnlySpanFromNullTerminated(reason);
            app.OnLogout(new Session(session, inCallback: true), why);
        }
        catch (Exception e)
        {
            Fault(app, nameof(Application.OnLogout), e);
        }
    }

    [UnmanagedCallersOnly(CallConvs = new[] { typeof(CallConvCdecl) })]
    private static void MessageIn(void* user, void* session, KiteMessage* message)
    {
        Application? app = null;
        try
        {
            app = App(user);
            app.OnMessage(new Session(session, inCallback: true), new Message(message));
        }
        catch (Exception e)
        {
            Fault(app, nameof(Application.OnMessage), e);
        }
    }

    private static void Fault(Application? app, string callback, Exception e)
    {
        try
        {
            if (app is null)
            {
                Console.Error.WriteLine($"kite: {callback}: no application behind the callback's user pointer: {e.Message}");
                return;
            }
            app.CountError();
            app.OnCallbackError(callback, e);
        }
        catch
        {
            // The handler's own failure has nowhere to go but here.
        }
    }
}
