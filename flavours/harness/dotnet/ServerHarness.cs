using System;
using System.Globalization;
using System.IO;
using System.Runtime.InteropServices;

namespace Kite.Harness;

// What every .NET flavour's server does for the lab (docs/flavours.md
// "Process"): the ready file, the `server load:` line and the stop on
// SIGTERM. Compiled into each flavour (dotnet-pure, dotnet-native).
internal static class ServerHarness
{
    // The port and a newline, written to PATH.tmp and renamed: a reader never sees half a file.
    public static void WriteReady(string path, int port)
    {
        if (path.Length == 0) return;
        string tmp = path + ".tmp";
        File.WriteAllText(tmp, port.ToString(CultureInfo.InvariantCulture) + "\n");
        File.Move(tmp, path, overwrite: true);
    }

    // "server load: NAME polls=N empty=E% busy=B% busy/order=U us orders=K".
    public static string LoadLine(string name, long polls, long empty, double busySeconds, double totalSeconds, long orders)
    {
        double emptyPct = polls > 0 ? 100.0 * empty / polls : 0.0;
        double busyPct = totalSeconds > 0 ? 100.0 * busySeconds / totalSeconds : 0.0;
        double perOrder = orders > 0 ? busySeconds * 1e6 / orders : 0.0;
        return string.Create(CultureInfo.InvariantCulture,
            $"server load: {name} polls={polls} empty={emptyPct:F1}% busy={busyPct:F1}% busy/order={perOrder:F2} us orders={orders}");
    }

    // SIGTERM and SIGINT call stop instead of ending the process, so the
    // server logs its sessions out and prints its load lines. The runtime's
    // signal thread starts here: call it before the ready file.
    public static IDisposable OnTerminate(Action stop)
    {
        PosixSignalRegistration term = PosixSignalRegistration.Create(PosixSignal.SIGTERM, c => { c.Cancel = true; stop(); });
        PosixSignalRegistration intr = PosixSignalRegistration.Create(PosixSignal.SIGINT, c => { c.Cancel = true; stop(); });
        return new Both(term, intr);
    }

    private sealed class Both : IDisposable
    {
        private readonly IDisposable _a, _b;
        public Both(IDisposable a, IDisposable b) { _a = a; _b = b; }
        public void Dispose() { _a.Dispose(); _b.Dispose(); }
    }
}
