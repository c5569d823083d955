package kafkabench;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Progress windows of `interval_s` on a grid from the start, so that workers started together report
 * aligned windows. A window carries its share of the running totals; a window that comes late (the loop
 * was blocked) simply covers more time and the grid carries on.
 */
final class Windows {
    private final long intervalNs;
    private long index, startNs, dueNs;
    private long records, payloadBytes, errors; // the totals when the current window began

    Windows(long startNs, long intervalNs) {
        this.intervalNs = intervalNs;
        this.startNs = startNs;
        this.dueNs = startNs + intervalNs;
    }

    boolean due(long now) {
        return now - dueNs >= 0;
    }

    long nanosUntilDue(long now) {
        return Math.max(0, dueNs - now);
    }

    /** Closes the current window at `now` and returns its `window` message body. */
    Map<String, Object> close(long now, long totalRecords, long totalPayloadBytes, long totalErrors,
                              Map<String, String> histograms) {
        Map<String, Object> window = new LinkedHashMap<>();
        window.put("index", index);
        window.put("start_ns", startNs);
        window.put("end_ns", now);
        window.put("records", totalRecords - records);
        window.put("payload_bytes", totalPayloadBytes - payloadBytes);
        window.put("errors", totalErrors - errors);
        window.put("histograms", histograms);
        index++;
        startNs = now;
        while (due(now)) dueNs += intervalNs;
        records = totalRecords;
        payloadBytes = totalPayloadBytes;
        errors = totalErrors;
        return window;
    }

    static Map<String, Object> progress(long done, Map<String, Object> window) {
        Map<String, Object> progress = new LinkedHashMap<>();
        progress.put("type", "progress");
        progress.put("done", done);
        progress.put("window", window);
        return progress;
    }
}
