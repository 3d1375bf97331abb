/*
 * Timing harness for the ARX library (org.deidentifier.arx, 3.9.x): optimal full-domain
 * generalization of one configuration, run through ARX's public API.
 *
 * Protocol: the data set and hierarchies are re-loaded (and the input handle, i.e. ARX's
 * dictionary encoding, created) before every anonymize() call, untimed; the wall time of
 * ARXAnonymizer.anonymize() is taken with System.nanoTime; `--warmups` unmeasured runs, then
 * `--runs` measured runs; the median is reported. Process CPU time (all JVM threads: JIT and GC
 * included) and the calling thread's CPU time of the same calls are recorded too, since the
 * machine may be shared. Prints one JSON object on stdout.
 *
 * Usage:
 *   java -Xmx8g -cp <arx classes>:<arx jars>:. ArxBench --data adult.csv --hierdir DIR --name adult \
 *        --qis sex,age,... [--sensitive occupation] [--k 5] [--model k|distinct-l|entropy-l|
 *        recursive-cl|equal-t|hier-t|avg-risk|sample-uniqueness|population-uniqueness|k-map|
 *        k-map-subset|d-presence|none]
 *        [--l 3] [--c 4] [--t 0.2] [--risk 0.05] [--highest 0.2 --at-risk 0.05]
 *        [--kmap 100] [--subset adult_subset.csv --dmin 0 --dmax 0.5] [--fraction 0.01] [--significance 0.01] [--estimator poisson|ztp|
 *        pitman|zayatz|snb|dankar] [--levels 0,3,0,...] --supp 0.05 --metric loss [--warmups 2]
 *        [--runs 5] [--label x]
 * --levels fixes the transformation (each QI's minimum and maximum level, in --qis order).
 * The risk-based models (anonlab issue 53): avg-risk is AverageReidentificationRisk(risk) or,
 * with --highest and --at-risk, AverageReidentificationRisk(risk, highest, at-risk);
 * sample-uniqueness is SampleUniqueness(risk); population-uniqueness is PopulationUniqueness(risk,
 * estimator, ARXPopulationModel.create(rows, fraction)); k-map is KMap(kmap, significance,
 * ARXPopulationModel.create(rows, fraction), POISSON or ZERO_TRUNCATED_POISSON).
 * The models with a research subset (--subset FILE: the subset's rows, each mapped by ARX to a
 * row of --data, the population; DataSubset.create(data, Data.create(subset))): k-map-subset is
 * KMap(kmap, subset) (pcount >= k), d-presence is DPresence(dmin, dmax, subset) (--dmin 0.0
 * --dmax 0.5).
 * Metrics: loss (createLossMetric(0.5, GEOMETRIC_MEAN)), entropy (createEntropyMetric(false)),
 * discernability (createDiscernabilityMetric(false)), aecs (createAECSMetric()),
 * precision (createPrecisionMetric(false)), height (createHeightMetric()).
 */
import java.io.File;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

import org.deidentifier.arx.ARXAnonymizer;
import org.deidentifier.arx.ARXConfiguration;
import org.deidentifier.arx.ARXPopulationModel;
import org.deidentifier.arx.DataSubset;
import org.deidentifier.arx.criteria.AverageReidentificationRisk;
import org.deidentifier.arx.criteria.DPresence;
import org.deidentifier.arx.criteria.KMap;
import org.deidentifier.arx.criteria.PopulationUniqueness;
import org.deidentifier.arx.criteria.SampleUniqueness;
import org.deidentifier.arx.risk.RiskModelPopulationUniqueness.PopulationUniquenessModel;
import org.deidentifier.arx.ARXLattice.ARXNode;
import org.deidentifier.arx.ARXResult;
import org.deidentifier.arx.AttributeType;
import org.deidentifier.arx.AttributeType.Hierarchy;
import org.deidentifier.arx.Data;
import org.deidentifier.arx.DataDefinition;
import org.deidentifier.arx.DataHandle;
import org.deidentifier.arx.aggregates.StatisticsEquivalenceClasses;
import org.deidentifier.arx.criteria.DistinctLDiversity;
import org.deidentifier.arx.criteria.EntropyLDiversity;
import org.deidentifier.arx.criteria.EqualDistanceTCloseness;
import org.deidentifier.arx.criteria.HierarchicalDistanceTCloseness;
import org.deidentifier.arx.criteria.KAnonymity;
import org.deidentifier.arx.criteria.RecursiveCLDiversity;
import org.deidentifier.arx.metric.Metric;
import org.deidentifier.arx.metric.Metric.AggregateFunction;

public class ArxBench {

    static Map<String, String> opts = new HashMap<>();

    static String opt(String key, String dflt) {
        String v = opts.get(key);
        return v == null ? dflt : v;
    }

    static Metric<?> metric(String name) {
        switch (name.toLowerCase(Locale.ROOT)) {
            case "loss": return Metric.createLossMetric(0.5d, AggregateFunction.GEOMETRIC_MEAN);
            case "entropy": return Metric.createEntropyMetric(false);
            case "discernability": return Metric.createDiscernabilityMetric(false);
            case "aecs": return Metric.createAECSMetric();
            case "precision": return Metric.createPrecisionMetric(false);
            case "height": return Metric.createHeightMetric();
            default: throw new IllegalArgumentException("unknown metric " + name);
        }
    }

    static File hierarchyFile(String attribute) {
        return new File(opt("hierdir", "."), opt("name", "data") + "_hierarchy_" + attribute + ".csv");
    }

    /** Untimed: read the CSV and hierarchies, set attribute types, create the input handle. */
    static Data load(List<String> qis, String sensitive) throws Exception {
        Data data = Data.create(new File(opts.get("data")), StandardCharsets.UTF_8, ';');
        DataHandle handle = data.getHandle();  // ARX's dictionary encoding of the cells
        DataDefinition def = data.getDefinition();
        for (int i = 0; i < handle.getNumColumns(); i++) {
            String a = handle.getAttributeName(i);
            if (qis.contains(a)) {
                def.setAttributeType(a, Hierarchy.create(hierarchyFile(a), StandardCharsets.UTF_8, ';'));
            } else if (a.equals(sensitive)) {
                def.setAttributeType(a, AttributeType.SENSITIVE_ATTRIBUTE);
            } else {
                def.setAttributeType(a, AttributeType.INSENSITIVE_ATTRIBUTE);
            }
        }
        String fixed = opts.get("levels");  // one transformation: min = max level per QI
        if (fixed != null) {
            String[] lv = fixed.split(",");
            for (int i = 0; i < qis.size(); i++) {
                def.setMinimumGeneralization(qis.get(i), Integer.parseInt(lv[i]));
                def.setMaximumGeneralization(qis.get(i), Integer.parseInt(lv[i]));
            }
        }
        return data;
    }

    static int rows = 0;

    static ARXPopulationModel population() {
        return ARXPopulationModel.create(rows, Double.parseDouble(opt("fraction", "0.01")));
    }

    static PopulationUniquenessModel uniquenessModel(String name) {
        switch (name) {
            case "pitman": return PopulationUniquenessModel.PITMAN;
            case "zayatz": return PopulationUniquenessModel.ZAYATZ;
            case "snb": return PopulationUniquenessModel.SNB;
            case "dankar": return PopulationUniquenessModel.DANKAR;
            default: throw new IllegalArgumentException("unknown estimator " + name);
        }
    }

    static Data current = null;

    /** The research subset (--subset FILE) of the data loaded last. */
    static DataSubset subset() throws Exception {
        Data rows = Data.create(new File(opts.get("subset")), StandardCharsets.UTF_8, ';');
        return DataSubset.create(current, rows);
    }

    static ARXConfiguration config(String sensitive) throws Exception {
        ARXConfiguration config = ARXConfiguration.create();
        int k = Integer.parseInt(opt("k", "0"));
        if (k > 0) config.addPrivacyModel(new KAnonymity(k));
        String model = opt("model", "k");
        switch (model) {
            case "k": break;
            case "distinct-l": config.addPrivacyModel(new DistinctLDiversity(sensitive, Integer.parseInt(opt("l", "2")))); break;
            case "entropy-l": config.addPrivacyModel(new EntropyLDiversity(sensitive, Double.parseDouble(opt("l", "2")))); break;
            case "recursive-cl": config.addPrivacyModel(new RecursiveCLDiversity(sensitive, Double.parseDouble(opt("c", "4")), Integer.parseInt(opt("l", "2")))); break;
            case "equal-t": config.addPrivacyModel(new EqualDistanceTCloseness(sensitive, Double.parseDouble(opt("t", "0.2")))); break;
            case "hier-t": config.addPrivacyModel(new HierarchicalDistanceTCloseness(sensitive, Double.parseDouble(opt("t", "0.2")),
                                   Hierarchy.create(hierarchyFile(sensitive), StandardCharsets.UTF_8, ';'))); break;
            case "none": break;
            case "avg-risk":
                double risk = Double.parseDouble(opt("risk", "0.05"));
                if (opts.containsKey("highest")) {
                    config.addPrivacyModel(new AverageReidentificationRisk(risk, Double.parseDouble(opt("highest", "1")), Double.parseDouble(opt("at-risk", "1"))));
                } else {
                    config.addPrivacyModel(new AverageReidentificationRisk(risk));
                }
                break;
            case "sample-uniqueness": config.addPrivacyModel(new SampleUniqueness(Double.parseDouble(opt("risk", "0.05")))); break;
            case "population-uniqueness": config.addPrivacyModel(new PopulationUniqueness(Double.parseDouble(opt("risk", "0.05")),
                                   uniquenessModel(opt("estimator", "dankar")), population())); break;
            case "k-map": config.addPrivacyModel(new KMap(Integer.parseInt(opt("kmap", "10")), Double.parseDouble(opt("significance", "0.01")), population(),
                                   opt("estimator", "poisson").equals("ztp") ? KMap.CellSizeEstimator.ZERO_TRUNCATED_POISSON : KMap.CellSizeEstimator.POISSON)); break;
            case "k-map-subset": config.addPrivacyModel(new KMap(Integer.parseInt(opt("kmap", "10")), subset())); break;
            case "d-presence": config.addPrivacyModel(new DPresence(Double.parseDouble(opt("dmin", "0")), Double.parseDouble(opt("dmax", "1")), subset())); break;
            default: throw new IllegalArgumentException("unknown model " + model);
        }
        config.setSuppressionLimit(Double.parseDouble(opt("supp", "0")));
        config.setQualityModel(metric(opt("metric", "loss")));
        return config;
    }

    static double median(List<Double> xs) {
        double[] a = xs.stream().mapToDouble(Double::doubleValue).toArray();
        Arrays.sort(a);
        int n = a.length;
        return n % 2 == 1 ? a[n / 2] : (a[n / 2 - 1] + a[n / 2]) / 2.0;
    }

    static String q(String s) {
        return s == null ? "null" : "\"" + s.replace("\\", "\\\\").replace("\"", "\\\"") + "\"";
    }

    static String list(List<?> xs) {
        StringBuilder b = new StringBuilder("[");
        for (int i = 0; i < xs.size(); i++) {
            if (i > 0) b.append(", ");
            Object x = xs.get(i);
            b.append(x instanceof String ? q((String) x) : String.valueOf(x));
        }
        return b.append("]").toString();
    }

    public static void main(String[] args) throws Exception {
        for (int i = 0; i + 1 < args.length; i += 2) opts.put(args[i].replaceFirst("^--", ""), args[i + 1]);
        List<String> qis = new ArrayList<>(Arrays.asList(opt("qis", "").split(",")));
        String sensitive = opts.get("sensitive");
        int warmups = Integer.parseInt(opt("warmups", "2"));
        int runs = Integer.parseInt(opt("runs", "5"));

        List<Double> warm = new ArrayList<>(), wall = new ArrayList<>(), arxTime = new ArrayList<>();
        List<Double> procCpu = new ArrayList<>(), threadCpu = new ArrayList<>();
        com.sun.management.OperatingSystemMXBean os =
            (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
        ThreadMXBean tmx = ManagementFactory.getThreadMXBean();
        ARXResult last = null;
        for (int i = 0; i < warmups + runs; i++) {
            Data data = load(qis, sensitive);
            current = data;
            rows = data.getHandle().getNumRows();
            ARXConfiguration config = config(sensitive);
            ARXAnonymizer anonymizer = new ARXAnonymizer();
            long p0 = os.getProcessCpuTime(), c0 = tmx.getCurrentThreadCpuTime();
            long t0 = System.nanoTime();
            ARXResult result = anonymizer.anonymize(data, config);
            long t1 = System.nanoTime();
            long p1 = os.getProcessCpuTime(), c1 = tmx.getCurrentThreadCpuTime();
            double ms = (t1 - t0) / 1e6;
            if (i < warmups) {
                warm.add(ms);
            } else {
                wall.add(ms);
                arxTime.add((double) result.getTime());
                procCpu.add((p1 - p0) / 1e6);
                threadCpu.add((c1 - c0) / 1e6);
            }
            last = result;
        }

        StringBuilder out = new StringBuilder("{");
        out.append("\"tool\": \"arx\", \"arx_version\": ").append(q(ARXAnonymizer.VERSION));
        out.append(", \"label\": ").append(q(opts.get("label")));
        out.append(", \"java\": ").append(q(System.getProperty("java.version")));
        out.append(", \"warmup_ms\": ").append(list(warm));
        out.append(", \"runs_ms\": ").append(list(wall));
        out.append(", \"median_ms\": ").append(median(wall));
        out.append(", \"min_ms\": ").append(wall.stream().mapToDouble(Double::doubleValue).min().getAsDouble());
        out.append(", \"process_cpu_ms_runs\": ").append(list(procCpu));
        out.append(", \"process_cpu_ms_median\": ").append(median(procCpu));
        out.append(", \"thread_cpu_ms_runs\": ").append(list(threadCpu));
        out.append(", \"thread_cpu_ms_median\": ").append(median(threadCpu));
        out.append(", \"arx_gettime_ms_runs\": ").append(list(arxTime));
        out.append(", \"arx_gettime_ms_median\": ").append(median(arxTime));
        ARXNode opt = last.getGlobalOptimum();
        out.append(", \"optimum_found\": ").append(opt != null);
        out.append(", \"transformations_checked\": ").append(last.getProcessStatistics().getTransformationsChecked());
        out.append(", \"transformations_available\": ").append(last.getProcessStatistics().getTransformationsAvailable());
        if (opt != null) {
            String[] attrs = opt.getQuasiIdentifyingAttributes();
            int[] levels = opt.getTransformation();
            StringBuilder tr = new StringBuilder("{");
            for (int i = 0; i < attrs.length; i++) {
                if (i > 0) tr.append(", ");
                tr.append(q(attrs[i])).append(": ").append(levels[i]);
            }
            out.append(", \"transformation\": ").append(tr.append("}"));
            out.append(", \"loss_highest\": ").append(q(opt.getHighestScore().toString()));
            out.append(", \"loss_lowest\": ").append(q(opt.getLowestScore().toString()));
            StatisticsEquivalenceClasses st = last.getOutput(false).getStatistics().getEquivalenceClassStatistics();
            out.append(", \"suppressed_records\": ").append(st.getNumberOfSuppressedRecords());
            out.append(", \"num_classes\": ").append(st.getNumberOfEquivalenceClasses());
        }
        out.append(", \"metric\": ").append(q(last.getConfiguration().getQualityModel().getName()));
        out.append(", \"privacy_models\": ").append(q(String.valueOf(last.getConfiguration().getPrivacyModels())));
        out.append("}");
        System.out.println(out);
    }
}
