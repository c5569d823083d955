package kafkabench;

import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;

/** What the worker process costs: CPU time and peak resident memory. */
final class Resources {
    private Resources() {
    }

    static long processCpuNanos() {
        var os = (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
        return os.getProcessCpuTime();
    }

    /** Peak resident set size (VmHWM) in MB; 0 where /proc is not available. */
    static double peakRssMb() {
        try {
            for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
                if (line.startsWith("VmHWM:")) return Long.parseLong(line.replaceAll("\\D", "")) / 1024.0;
            }
        } catch (Exception e) {
            System.err.println("cannot read the peak RSS: " + e);
        }
        return 0.0;
    }
}
