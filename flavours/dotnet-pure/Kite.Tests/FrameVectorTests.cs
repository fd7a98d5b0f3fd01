using System;
using System.Collections.Generic;
using System.IO;
using System.Text;
using Kite.Codec;
using Xunit;

namespace Kite.Tests;

/// <summary>The shared frame vectors (tests/vectors/frames.txt), which every codec's tests read.</summary>
public class FrameVectorTests
{
    private sealed record Vector(string Name, byte[] Frame, string Expect, int Size, string Fields);

    private static List<Vector> Vectors()
    {
        string path = Path.Combine(AppContext.BaseDirectory, "frames.txt");
        var output = new List<Vector>();
        foreach (string block in File.ReadAllText(path).Split("\n\n"))
        {
            string? name = null, expect = null, fields = "";
            byte[] frame = Array.Empty<byte>();
            int size = 0;
            foreach (string line in block.Split('\n'))
            {
                if (line.Length == 0 || line.StartsWith('#')) continue;
                int colon = line.IndexOf(": ", StringComparison.Ordinal);
                Assert.True(colon > 0, $"not `key: value`: {line}");
                string key = line[..colon], value = line[(colon + 2)..];
                switch (key)
                {
                    case "name": name = value; break;
                    case "frame": frame = Encoding.ASCII.GetBytes(value.Replace('|', '\u0001')); break;
                    case "expect": expect = value; break;
                    case "size": size = int.Parse(value); break;
                    case "fields": fields = value; break;
                    default: throw new InvalidDataException($"unknown key {key}");
                }
            }
            if (name != null) output.Add(new Vector(name, frame, expect!, size, fields));
        }
        Assert.True(output.Count >= 8, $"only {output.Count} vectors read");
        return output;
    }

    private static string BodyFields(FieldIndex ix, ReadOnlySpan<byte> body)
    {
        var parts = new List<string>();
        for (int i = 0; i < ix.Count; i++)
            parts.Add($"{ix.TagAt(i)}={Encoding.ASCII.GetString(ix.Value(body, i))}");
        return string.Join('|', parts);
    }

    [Fact]
    public void FramingAndIndexAgreeWithEveryVector()
    {
        var ix = new FieldIndex();
        foreach (Vector v in Vectors())
        {
            Frame f = Framing.Next(v.Frame);
            Assert.True(v.Size == f.Length, $"{v.Name}: length {f.Length}, the vector says {v.Size}");
            if (v.Expect == "bad-checksum")
            {
                Assert.True(f.Status == FrameStatus.Garbled, $"{v.Name}: {f.Status}");
                continue;
            }
            Assert.True(f.Status == FrameStatus.Complete, $"{v.Name}: {f.Status}");
            var body = new ReadOnlySpan<byte>(v.Frame, f.BodyStart, f.BodyLength);
            if (v.Expect == "bad-field")
            {
                Assert.False(ix.Build(body), v.Name);
                continue;
            }
            Assert.Equal("complete", v.Expect);
            Assert.True(ix.Build(body), v.Name);
            Assert.Equal(v.Fields, BodyFields(ix, body));
        }
    }

    [Fact]
    public void EveryStrictPrefixOfAVectorIsIncomplete()
    {
        foreach (Vector v in Vectors())
            for (int n = 0; n < v.Size; n++)
                Assert.True(Framing.Next(v.Frame.AsSpan(0, n)).Status == FrameStatus.Incomplete, $"{v.Name} cut at {n}");
    }
}
