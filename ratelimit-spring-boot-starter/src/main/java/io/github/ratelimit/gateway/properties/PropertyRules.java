package io.github.ratelimit.gateway.properties;

import java.lang.annotation.Annotation;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.regex.Pattern;

import org.jspecify.annotations.Nullable;

import org.springframework.boot.convert.DurationStyle;

/**
 * The range rules of single properties, declared on the fields of the {@code @ConfigurationProperties} classes
 * beside the javadoc they describe, and the check that reads them. Each rule names its fix; a broken rule is one
 * {@link ConfigurationViolation} of the property ({@code <prefix>.<field in kebab case>}) whose reason is the rule's
 * sentence and the value found, e.g. {@code must be at least 1, was 0.}. Rules that involve more than one property
 * live in {@link RateLimitPropertiesValidator}.
 */
final class PropertyRules {

	private PropertyRules() {
	}

	/** A value that must be set: {@code must be set.} */
	@Retention(RetentionPolicy.RUNTIME)
	@Target(ElementType.FIELD)
	@interface Required {

		/** @return how to fix the value */
		String fix();

	}

	/** A string that must hold more than white space: {@code must not be empty.} ({@code blank} when optional). */
	@Retention(RetentionPolicy.RUNTIME)
	@Target(ElementType.FIELD)
	@interface NotBlank {

		/** @return how to fix the value */
		String fix();

		/** @return whether the value may be left out ({@code null}); if set it must not be blank */
		boolean optional() default false;

	}

	/** A string matching a pattern: {@code must be <what>, was '<value>'.} */
	@Retention(RetentionPolicy.RUNTIME)
	@Target(ElementType.FIELD)
	@interface Matches {

		/** @return the regular expression the whole value must match */
		String regexp();

		/** @return the allowed values in words */
		String what();

		/** @return how to fix the value */
		String fix();

	}

	/** An integer of at least {@code value}: {@code must be at least <value>, was <value>.} */
	@Retention(RetentionPolicy.RUNTIME)
	@Target(ElementType.FIELD)
	@interface Min {

		/** @return the smallest value allowed */
		long value();

		/** @return how to fix the value */
		String fix();

	}

	/** An integer from {@code min} to {@code max}: {@code must be between <min> and <max>[ <unit>], was <value>.} */
	@Retention(RetentionPolicy.RUNTIME)
	@Target(ElementType.FIELD)
	@interface Between {

		/** @return the smallest value allowed */
		long min();

		/** @return the largest value allowed */
		long max();

		/** @return the unit named after the range, empty for none */
		String unit() default "";

		/** @return how to fix the value */
		String fix();

	}

	/** An integer of 0 or more: {@code must be 0[ (<zero>)] or positive, was <value>.} */
	@Retention(RetentionPolicy.RUNTIME)
	@Target(ElementType.FIELD)
	@interface PositiveOrZero {

		/** @return what 0 means, named after it; empty for nothing */
		String zero() default "";

		/** @return how to fix the value */
		String fix();

	}

	/** A percentage above 0 and at most 100: {@code must be above 0 and at most 100 (percent), was <value>.} */
	@Retention(RetentionPolicy.RUNTIME)
	@Target(ElementType.FIELD)
	@interface Percent {

		/** @return how to fix the value */
		String fix();

	}

	/**
	 * A duration above 0: {@code must be positive, was <value>.}; with a {@code max},
	 * {@code must be above 0 and at most <max>, was <value>.}
	 */
	@Retention(RetentionPolicy.RUNTIME)
	@Target(ElementType.FIELD)
	@interface PositiveDuration {

		/** @return the longest duration allowed (e.g. {@code 10s}), empty for no bound */
		String max() default "";

		/** @return whether the value may be left out ({@code null}) */
		boolean optional() default false;

		/** @return how to fix the value */
		String fix();

	}

	/** A duration of at least {@code value}: {@code must be at least <value>, was <value>.} */
	@Retention(RetentionPolicy.RUNTIME)
	@Target(ElementType.FIELD)
	@interface MinDuration {

		/** @return the shortest duration allowed, e.g. {@code 1ms} */
		String value();

		/** @return how to fix the value */
		String fix();

	}

	/** A duration of 0 or more: {@code must be 0 or positive, was <value>.} */
	@Retention(RetentionPolicy.RUNTIME)
	@Target(ElementType.FIELD)
	@interface NotNegativeDuration {

		/** @return how to fix the value */
		String fix();

	}

	/**
	 * Check every rule declared on the fields of a properties object and of its nested properties (fields whose type
	 * is a class nested in the class declaring the field), in the order the fields are declared.
	 * @param properties the bound properties
	 * @param prefix the prefix the properties are bound from, e.g. {@code ratelimit}
	 * @return the broken rules, one per property; empty when every value is in range
	 */
	static List<ConfigurationViolation> check(Object properties, String prefix) {
		List<ConfigurationViolation> violations = new ArrayList<>();
		check(properties, prefix + ".", violations);
		return violations;
	}

	private static void check(Object bean, String prefix, List<ConfigurationViolation> violations) {
		for (Field field : fields(bean.getClass())) {
			String property = prefix + kebabCase(field.getName());
			Object value = read(field, bean);
			Class<?> type = field.getType();
			if (value != null && !type.isEnum() && type.getDeclaringClass() == field.getDeclaringClass()) {
				check(value, property + ".", violations);
				continue;
			}
			for (Annotation rule : field.getAnnotations()) {
				ConfigurationViolation violation = broken(rule, property, value);
				if (violation != null) {
					violations.add(violation);
				}
			}
		}
	}

	private static @Nullable ConfigurationViolation broken(Annotation rule, String property, @Nullable Object value) {
		if (rule instanceof Required r) {
			return (value != null) ? null : new ConfigurationViolation(property, "must be set.", r.fix());
		}
		if (rule instanceof NotBlank r) {
			if ((value == null) ? r.optional() : !value.toString().isBlank()) {
				return null;
			}
			return new ConfigurationViolation(property, r.optional() ? "must not be blank." : "must not be empty.",
					r.fix());
		}
		if (rule instanceof Matches r) {
			return (value != null && Pattern.matches(r.regexp(), value.toString())) ? null
					: new ConfigurationViolation(property, "must be " + r.what() + ", was '" + value + "'.", r.fix());
		}
		if (rule instanceof Min r) {
			return (number(value) >= r.value()) ? null
					: new ConfigurationViolation(property, "must be at least " + r.value() + ", was " + value + ".",
							r.fix());
		}
		if (rule instanceof Between r) {
			long n = number(value);
			String unit = r.unit().isEmpty() ? "" : " " + r.unit();
			return (n >= r.min() && n <= r.max()) ? null : new ConfigurationViolation(property,
					"must be between " + r.min() + " and " + r.max() + unit + ", was " + value + ".", r.fix());
		}
		if (rule instanceof PositiveOrZero r) {
			String zero = r.zero().isEmpty() ? "" : " (" + r.zero() + ")";
			return (number(value) >= 0) ? null
					: new ConfigurationViolation(property, "must be 0" + zero + " or positive, was " + value + ".",
							r.fix());
		}
		if (rule instanceof Percent r) {
			double percent = ((Number) nonNull(value, property)).doubleValue();
			return (percent > 0 && percent <= 100) ? null : new ConfigurationViolation(property,
					"must be above 0 and at most 100 (percent), was " + value + ".", r.fix());
		}
		if (rule instanceof PositiveDuration r) {
			Duration d = (Duration) value;
			boolean inRange = (d == null) ? r.optional()
					: !d.isNegative() && !d.isZero() && (r.max().isEmpty() || d.compareTo(duration(r.max())) <= 0);
			String range = r.max().isEmpty() ? "positive" : "above 0 and at most " + r.max();
			return inRange ? null
					: new ConfigurationViolation(property, "must be " + range + ", was " + value + ".", r.fix());
		}
		if (rule instanceof MinDuration r) {
			Duration d = (Duration) value;
			return (d != null && d.compareTo(duration(r.value())) >= 0) ? null
					: new ConfigurationViolation(property, "must be at least " + r.value() + ", was " + value + ".",
							r.fix());
		}
		if (rule instanceof NotNegativeDuration r) {
			Duration d = (Duration) value;
			return (d != null && !d.isNegative()) ? null
					: new ConfigurationViolation(property, "must be 0 or positive, was " + value + ".", r.fix());
		}
		return null;
	}

	private static long number(@Nullable Object value) {
		return ((Number) nonNull(value, "a number")).longValue();
	}

	private static Object nonNull(@Nullable Object value, String what) {
		if (value == null) {
			throw new IllegalStateException(what + " rule on a field without a value");
		}
		return value;
	}

	private static Duration duration(String text) {
		return DurationStyle.SIMPLE.parse(text);
	}

	/** The instance fields of a class and its superclasses, superclasses first, each in declaration order. */
	private static List<Field> fields(Class<?> type) {
		List<Field> fields = new ArrayList<>();
		for (Class<?> c = type; c != null && c != Object.class; c = c.getSuperclass()) {
			List<Field> own = new ArrayList<>();
			for (Field field : c.getDeclaredFields()) {
				if (!Modifier.isStatic(field.getModifiers()) && !field.isSynthetic()) {
					own.add(field);
				}
			}
			fields.addAll(0, own);
		}
		return fields;
	}

	private static @Nullable Object read(Field field, Object bean) {
		try {
			field.setAccessible(true);
			return field.get(bean);
		}
		catch (IllegalAccessException ex) {
			throw new IllegalStateException("cannot read " + field, ex);
		}
	}

	/** {@code ipv6PrefixLength} -> {@code ipv6-prefix-length}, as Spring Boot names the property of a field. */
	private static String kebabCase(String fieldName) {
		StringBuilder name = new StringBuilder(fieldName.length() + 4);
		for (char c : fieldName.toCharArray()) {
			if (Character.isUpperCase(c)) {
				name.append('-').append(Character.toLowerCase(c));
			}
			else {
				name.append(c);
			}
		}
		return name.toString().toLowerCase(Locale.ROOT);
	}

}
