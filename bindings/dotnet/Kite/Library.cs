using System;
using System.IO;
using System.Reflection;
using System.Runtime.InteropServices;
using Kite.Interop;

namespace Kite;

/// <summary>
/// libkite itself: where it is loaded from and which version it is. The
/// library is looked for as <c>$KITE_LIBRARY</c> when set, else
/// <c>libkite.so</c> beside Kite.dll (where the build and an install put
/// it), else by the system loader (<c>LD_LIBRARY_PATH</c>, the cache).
/// </summary>
public static class Library
{
    static Library() => NativeLibrary.SetDllImportResolver(typeof(Library).Assembly, Resolve);

    /// <summary>
    /// Loads libkite and checks that its major version is the one these
    /// bindings were written for. Every start call does this first; call it
    /// early to fail with a clear message.
    /// </summary>
    /// <exception cref="KiteException">libkite is missing or of another major version.</exception>
    public static void EnsureLoaded()
    {
        int number;
        try
        {
            number = Native.VersionNumber();
        }
        catch (DllNotFoundException e)
        {
            throw new KiteException(Status.ErrorStart,
                "cannot load libkite.so (set KITE_LIBRARY to its path, or put it beside Kite.dll): " + e.Message);
        }
        if (number / 10000 != Native.VersionMajor)
            throw new KiteException(Status.ErrorStart,
                $"libkite is version {Version} (major {number / 10000}); these bindings need major {Native.VersionMajor}");
    }

    /// <summary>libkite's version and build stamp, e.g. "0.1.0 git=... compiler=...".</summary>
    public static unsafe string Version => Marshal.PtrToStringUTF8((IntPtr)Native.Version()) ?? "";

    /// <summary>major * 10000 + minor * 100 + patch.</summary>
    public static int VersionNumber => Native.VersionNumber();

    private static IntPtr Resolve(string name, Assembly assembly, DllImportSearchPath? path)
    {
        if (name != Native.Library) return IntPtr.Zero;
        string? explicitPath = Environment.GetEnvironmentVariable("KITE_LIBRARY");
        if (!string.IsNullOrEmpty(explicitPath))
        {
            if (NativeLibrary.TryLoad(explicitPath, out IntPtr h)) return h;
            throw new DllNotFoundException($"KITE_LIBRARY={explicitPath} cannot be loaded");
        }
        string beside = Path.Combine(Path.GetDirectoryName(assembly.Location) is { Length: > 0 } d ? d : AppContext.BaseDirectory,
                                     "libkite.so");
        if (File.Exists(beside) && NativeLibrary.TryLoad(beside, out IntPtr handle)) return handle;
        return NativeLibrary.TryLoad("libkite.so", assembly, path, out handle) ? handle : IntPtr.Zero;
    }
}
